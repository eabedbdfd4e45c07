<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * mod_authz_core's logic: a `Require` line, or a `<RequireAny|All|None>` of them (the lines of one
 * context form an implicit RequireAny). Each yields GRANTED, DENIED or NEUTRAL; `not` turns granted into
 * denied and denied into neutral; the result at the top must be GRANTED.
 */
final class Requirement
{
    public const GRANTED = 1;
    public const NEUTRAL = 0;
    public const DENIED = -1;

    /**
     * @param string $kind a group (any, all, none) or a line (granted, denied, ip, local, method, env, never)
     * @param list<IpRange|string> $values ranges (ip) or names (method, env)
     * @param ?list<string> $methods an enclosing `<Limit>`: the line counts only for these methods
     * @param list<Requirement> $children of a group
     */
    public function __construct(
        private readonly string $kind,
        private readonly bool $negate = false,
        private readonly array $values = [],
        private readonly ?array $methods = null,
        private readonly bool $exceptMethods = false,
        private array $children = [],
    ) {}

    public function add(self $child): void
    {
        $this->children[] = $child;
    }

    public function isGroup(): bool
    {
        return \in_array($this->kind, ['any', 'all', 'none'], true);
    }

    /** @param array<string, string> $env */
    public function grants(string $ip, string $method, array $env): bool
    {
        $result = $this->evaluate($ip, $method, $env);
        return $result === self::GRANTED || $result === null;
    }

    /**
     * @param array<string, string> $env
     * @return ?int null: nothing here applies to this method
     */
    private function evaluate(string $ip, string $method, array $env): ?int
    {
        if ($this->methods !== null && \in_array($method, $this->methods, true) === $this->exceptMethods) {
            return null;
        }
        $result = match ($this->kind) {
            'any', 'none' => $this->any($ip, $method, $env),
            'all' => $this->all($ip, $method, $env),
            default => $this->leaf($ip, $method, $env) ? self::GRANTED : self::DENIED,
        };
        if ($result !== null && ($this->negate || $this->kind === 'none')) {
            return $result === self::GRANTED ? self::DENIED : self::NEUTRAL;
        }
        return $result;
    }

    /** @param array<string, string> $env */
    private function any(string $ip, string $method, array $env): ?int
    {
        $result = null;
        foreach ($this->children as $child) {
            $one = $child->evaluate($ip, $method, $env);
            if ($one === self::GRANTED) {
                return self::GRANTED;
            }
            if ($one !== null && ($result === null || $result === self::NEUTRAL)) {
                $result = $one;
            }
        }
        return $result;
    }

    /** @param array<string, string> $env */
    private function all(string $ip, string $method, array $env): ?int
    {
        $result = null;
        foreach ($this->children as $child) {
            $one = $child->evaluate($ip, $method, $env);
            if ($one === self::DENIED) {
                return self::DENIED;
            }
            if ($one === self::GRANTED || ($one === self::NEUTRAL && $result === null)) {
                $result = $one;
            }
        }
        return $result;
    }

    /** @param array<string, string> $env */
    private function leaf(string $ip, string $method, array $env): bool
    {
        switch ($this->kind) {
            case 'granted':
                return true;
            case 'ip':
            case 'local':
                foreach ($this->values as $range) {
                    if ($range instanceof IpRange && $range->contains($ip)) {
                        return true;
                    }
                }
                return false;
            case 'method':
                return \in_array($method, $this->values, true);
            case 'env':
                foreach ($this->values as $name) {
                    if (\is_string($name) && isset($env[$name])) {
                        return true;
                    }
                }
                return false;
            default:
                return false; // denied, never (a provider Kiln does not have: user, group, host, expr)
        }
    }
}
