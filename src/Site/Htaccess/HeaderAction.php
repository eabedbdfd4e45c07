<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** One mod_headers `Header` line: `Header [always|onsuccess] set|append|add|merge|setifempty|unset NAME [VALUE] [env=[!]VAR]`. */
final class HeaderAction
{
    public const OPS = ['set', 'append', 'add', 'merge', 'setifempty', 'unset'];

    public function __construct(
        /** One of OPS. */
        public readonly string $op,
        public readonly string $name,
        public readonly string $value,
        /** `always`: also on error responses Kiln makes itself (403, 404, redirects); else only on served files and scripts. */
        public readonly bool $always,
        private readonly ?string $env = null,
        private readonly bool $envNegated = false,
    ) {}

    /** @param array<string, string> $env */
    public function appliesWith(array $env): bool
    {
        return $this->env === null || isset($env[$this->env]) !== $this->envNegated;
    }

    /**
     * The header's values after this action, given its values before (empty list: absent).
     *
     * @param list<string> $values
     * @param array<string, string> $env for `%{VAR}e` in the value
     * @return list<string>
     */
    public function apply(array $values, array $env = []): array
    {
        $value = (string) preg_replace_callback('/%(%|\{([^}]*)\}e)/', static fn(array $m): string => $m[1] === '%' ? '%' : ($env[$m[2] ?? ''] ?? ''), $this->value);
        return match ($this->op) {
            'set' => [$value],
            'setifempty' => $values === [] ? [$value] : $values,
            'add' => [...$values, $value],
            'append' => $values === [] ? [$value] : [implode(', ', $values) . ', ' . $value],
            'merge' => $values !== [] && \in_array($value, array_map('trim', explode(',', implode(',', $values))), true)
                ? $values : ($values === [] ? [$value] : [implode(', ', $values) . ', ' . $value]),
            default => [],
        };
    }
}
