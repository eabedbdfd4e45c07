<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * APCu's shared memory. APCu maps its segment at module start-up, so every process forked from the
 * supervisor (every worker, every generation) shares it — but only when the CLI has it on:
 * `apc.enable_cli=1` (a system setting: php.ini or `php -d`). Each update() holds a per-key spin lock
 * (apcu_add of a lock entry that expires after a second, so a crashed holder cannot wedge the key).
 * APCu reclaims expired entries itself when memory runs short (and wipes the cache if apc.ttl=0 and
 * that is not enough).
 */
final class ApcuState implements SharedState
{
    private bool $busy = false;

    public function __construct(private readonly string $prefix = 'kiln.state:')
    {
        if (!self::available()) {
            throw new \Error('APCu is not usable here: install ext-apcu and set apc.enable_cli=1');
        }
    }

    public static function available(): bool
    {
        return \function_exists('apcu_enabled') && apcu_enabled();
    }

    public function update(string $key, \Closure $fn, int $ttlSeconds): ?array
    {
        if ($ttlSeconds < 0) {
            throw new \ValueError("TTL must be ≥ 0 seconds (0: never expires), got $ttlSeconds");
        }
        if ($this->busy) {
            throw new \Error('SharedState is not re-entrant: the update callback must not suspend or call the store');
        }
        $entry = $this->prefix . $key;
        $lock = $entry . "\0lock";
        $this->busy = true;
        for ($spins = 0; !apcu_add($lock, 1, 1); $spins++) {
            $spins < 64 ? usleep(0) : usleep(50);
        }
        try {
            $current = apcu_fetch($entry, $found);
            $new = $fn($found && \is_array($current) ? $current : null);
            if ($new === null) {
                apcu_delete($entry);
            } elseif (!apcu_store($entry, $new, $ttlSeconds)) {
                throw new StoreException('APCu refused the value (out of shared memory?)');
            }
            return $new;
        } finally {
            apcu_delete($lock);
            $this->busy = false;
        }
    }

    public function get(string $key): ?array
    {
        $value = apcu_fetch($this->prefix . $key, $found);
        return $found && \is_array($value) ? $value : null;
    }

    public function delete(string $key): void
    {
        $this->update($key, static fn(): ?array => null, 0);
    }
}
