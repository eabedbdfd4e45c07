<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * mod_access_compat: `Order`, `Allow from`, `Deny from` of one context. A context that has any of them
 * replaces its parent's whole set (the module does not merge).
 */
final class AccessCompat
{
    /** @var list<array{allow: bool, all: bool, ranges: list<IpRange>, env: ?string, methods: ?list<string>, except: bool}> */
    private array $entries = [];

    public string $order = 'deny,allow';

    /**
     * @param list<IpRange> $ranges
     * @param ?list<string> $methods
     */
    public function add(bool $allow, bool $all, array $ranges, ?string $env, ?array $methods, bool $except): void
    {
        $this->entries[] = ['allow' => $allow, 'all' => $all, 'ranges' => $ranges, 'env' => $env, 'methods' => $methods, 'except' => $except];
    }

    /** @param array<string, string> $env */
    public function allows(string $ip, string $method, array $env): bool
    {
        $allowed = $this->matches(true, $ip, $method, $env);
        $denied = $this->matches(false, $ip, $method, $env);
        return match ($this->order) {
            'allow,deny', 'mutual-failure' => $allowed && !$denied,
            default => !$denied || $allowed,
        };
    }

    /** @param array<string, string> $env */
    private function matches(bool $allow, string $ip, string $method, array $env): bool
    {
        foreach ($this->entries as $entry) {
            if ($entry['allow'] !== $allow) {
                continue;
            }
            if ($entry['methods'] !== null && \in_array($method, $entry['methods'], true) === $entry['except']) {
                continue;
            }
            if ($entry['all'] || ($entry['env'] !== null && isset($env[$entry['env']]))) {
                return true;
            }
            foreach ($entry['ranges'] as $range) {
                if ($range->contains($ip)) {
                    return true;
                }
            }
        }
        return false;
    }
}
