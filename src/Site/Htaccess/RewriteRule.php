<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** One `RewriteRule Pattern Substitution [flags]` with the RewriteCond lines above it, checked. */
final class RewriteRule
{
    /** Flags Kiln accepts and ignores: they change nothing without subrequests, proxies or Vary. */
    private const NO_OPS = ['NS', 'NOSUBREQ', 'PT', 'PASSTHROUGH', 'DPI', 'DISCARDPATH', 'NV', 'NOVARY'];

    /** @var list<array{string, ?string}> E= settings: name (`!name` unsets) => value */
    public array $env = [];

    public bool $last = false;

    public bool $end = false;

    public bool $qsa = false;

    public bool $qsd = false;

    public ?int $redirect = null;

    /** 403 (F) or 410 (G), 0: neither. */
    public int $refuse = 0;

    public bool $noEscape = false;

    public bool $escapeBackrefs = false;

    public bool $chain = false;

    public int $skip = 0;

    public ?string $type = null;

    /** @param list<RewriteCondition> $conditions */
    private function __construct(
        /** The compiled regex. */
        public readonly string $pattern,
        public readonly bool $negate,
        public readonly string $substitution,
        public readonly array $conditions,
        public readonly string $file,
        public readonly int $line,
    ) {}

    /**
     * @param list<RewriteCondition> $conditions
     * @param list<string> $warnings filled with flags Kiln ignores
     * @throws \InvalidArgumentException on what makes the rule unusable (bad regex, a flag Kiln cannot honour)
     */
    public static function create(string $pattern, string $substitution, string $flags, array $conditions, string $file, int $line, array &$warnings): self
    {
        $list = self::flags($flags);
        $noCase = \in_array('NC', $list, true) || \in_array('NOCASE', $list, true);
        $negate = str_starts_with($pattern, '!');
        $rule = new self(Regex::compile($negate ? substr($pattern, 1) : $pattern, $noCase), $negate, $substitution, $conditions, $file, $line);
        foreach ($list as $raw) {
            $equals = strpos($raw, '=');
            $flag = strtoupper($equals === false ? $raw : substr($raw, 0, $equals));
            $value = $equals === false ? null : substr($raw, $equals + 1);
            match ($flag) {
                'L', 'LAST' => $rule->last = true,
                'END' => $rule->end = true,
                'QSA', 'QSAPPEND' => $rule->qsa = true,
                'QSD', 'QSDISCARD' => $rule->qsd = true,
                'F', 'FORBIDDEN' => $rule->refuse = 403,
                'G', 'GONE' => $rule->refuse = 410,
                'R', 'REDIRECT' => self::status($value) < 400 ? $rule->redirect = self::status($value) : $rule->refuse = self::status($value),
                'NE', 'NOESCAPE' => $rule->noEscape = true,
                'B' => $rule->escapeBackrefs = true,
                'C', 'CHAIN' => $rule->chain = true,
                'S', 'SKIP' => $rule->skip = max(0, (int) $value),
                'T', 'TYPE' => $rule->type = $value,
                'NC', 'NOCASE' => null,
                'E', 'ENV' => $rule->env[] = self::env((string) $value),
                default => \in_array($flag, self::NO_OPS, true)
                    ? null
                    : (\in_array($flag, ['P', 'PROXY'], true)
                        ? throw new \InvalidArgumentException('the proxy flag [P] is not supported; rule skipped')
                        : $warnings[] = "flag '$raw' is not supported; ignored"),
            };
        }
        return $rule;
    }

    /** @return list<string> */
    private static function flags(string $flags): array
    {
        if ($flags === '') {
            return [];
        }
        if (!str_starts_with($flags, '[') || !str_ends_with($flags, ']')) {
            throw new \InvalidArgumentException("flags must be written [A,B], got '$flags'");
        }
        return array_values(array_filter(array_map('trim', explode(',', substr($flags, 1, -1))), static fn(string $f): bool => $f !== ''));
    }

    private static function status(?string $value): int
    {
        if ($value === null || $value === '') {
            return 302;
        }
        $status = ['permanent' => 301, 'temp' => 302, 'seeother' => 303][strtolower($value)] ?? (ctype_digit($value) ? (int) $value : 0);
        if ($status < 300 || $status > 599) {
            throw new \InvalidArgumentException("[R=$value] needs a 3xx, 4xx or 5xx status");
        }
        return $status;
    }

    /** @return array{string, ?string} */
    private static function env(string $value): array
    {
        if (str_starts_with($value, '!')) {
            return [substr($value, 1), null];
        }
        $colon = strpos($value, ':');
        return $colon === false ? [$value, ''] : [substr($value, 0, $colon), substr($value, $colon + 1)];
    }
}
