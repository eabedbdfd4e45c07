<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Store\Internal\ApcuCriticalSection;
use Kiln\Store\Internal\Values;

/**
 * A Store in APCu's shared memory (every worker of a node shares it: see ApcuState). get/set/add/delete are
 * one APCu call each and increment() is apcu_inc(), so the Store costs little more than APCu itself;
 * compareAndSet() runs inside apcu_entry(), which holds APCu's write lock, so it is atomic against every
 * other write of any process.
 *
 * Bounded twice. Every $checkEvery writes a process looks at APCu's entry count and free memory; past
 * $maxEntries, or with less than an eighth of the memory free, it removes this store's expired keys and
 * then the live ones that expire soonest (never-expiring keys last), down to 15/16 of the bound, and counts
 * them as evictions. This runs before APCu itself runs out: APCu's own answer to a full segment (with the
 * default apc.ttl=0) is to wipe every entry at once. A write APCu still refuses is a StoreException.
 */
final class ApcuStore implements Store
{
    private const CLOCK = "kiln.store\0clock";

    private int $writes = 0;

    private readonly int $checkEvery;

    private readonly string $pattern;

    private readonly string $evictionKey;

    public function __construct(
        private readonly string $prefix = 'kiln.store:',
        private readonly int $maxEntries = 200_000,
        private readonly int $maxValueBytes = 1 << 20,
    ) {
        if (!ApcuState::available()) {
            throw new \Error('APCu is not usable here: install ext-apcu and set apc.enable_cli=1');
        }
        if ($maxEntries < 1 || $maxValueBytes < 1) {
            throw new \ValueError('An APCu store needs maxEntries ≥ 1 and maxValueBytes ≥ 1');
        }
        $this->checkEvery = max(1, min(64, intdiv($maxEntries, 8)));
        $this->pattern = '/^' . preg_quote($prefix, '/') . '/s';
        $this->evictionKey = "kiln.store-evictions\0" . $prefix;
    }

    public function get(string $key): mixed
    {
        $value = apcu_fetch($this->prefix . $key, $found);
        return $found ? $value : null;
    }

    public function set(string $key, mixed $value, int $ttl = 0): void
    {
        // Short strings and numbers, the common values, skip the full check (Values::check() says the same).
        if ($ttl < 0 || (\is_string($value) ? \strlen($value) > $this->maxValueBytes : !\is_int($value) && !\is_float($value))) {
            Values::check($value, $this->maxValueBytes);
            Values::ttl($ttl);
        }
        if (++$this->writes >= $this->checkEvery) {
            $this->bound();
        }
        if (!apcu_store($this->prefix . $key, $value, $ttl)) {
            $this->evict(true);
            apcu_store($this->prefix . $key, $value, $ttl) || throw new StoreException('APCu refused the value (out of shared memory: raise apc.shm_size)');
        }
    }

    public function add(string $key, mixed $value, int $ttl = 0): bool
    {
        Values::check($value, $this->maxValueBytes);
        Values::ttl($ttl);
        $this->beforeWrite();
        return apcu_add($this->prefix . $key, $value, $ttl);
    }

    public function delete(string $key): bool
    {
        return apcu_delete($this->prefix . $key);
    }

    public function increment(string $key, int $by = 1, int $ttl = 0): int
    {
        // The hot path of counters: checks inlined, one APCu call.
        if ($ttl < 0) {
            Values::ttl($ttl);
        }
        if (++$this->writes >= $this->checkEvery) {
            $this->bound();
        }
        $value = $ttl === 0 ? apcu_inc($this->prefix . $key, $by) : apcu_inc($this->prefix . $key, $by, $done, $ttl);
        if (\is_int($value)) {
            // APCu wraps around past the 64-bit range: a sum on the wrong side of $by wrapped.
            if ($by > 0 ? $value < \PHP_INT_MIN + $by : $value > \PHP_INT_MAX + $by) {
                apcu_inc($this->prefix . $key, -$by);
                throw new \ValueError("Incrementing '$key' by $by would overflow a 64-bit integer");
            }
            return $value;
        }
        $current = apcu_fetch($this->prefix . $key, $found);
        if ($found && !\is_int($current)) {
            throw new \ValueError("Key '$key' holds a " . get_debug_type($current) . ', not an integer: it cannot be incremented');
        }
        throw new StoreException("APCu could not increment '$key' (out of shared memory?)");
    }

    public function compareAndSet(string $key, mixed $expected, mixed $new, int $ttl = 0): bool
    {
        if ($new !== null) {
            Values::check($new, $this->maxValueBytes);
        }
        Values::ttl($ttl);
        $this->beforeWrite();
        $entry = $this->prefix . $key;
        return ApcuCriticalSection::run(static function () use ($entry, $expected, $new, $ttl): bool {
            $current = apcu_fetch($entry, $found);
            if ($expected === null ? $found : (!$found || $current !== $expected)) {
                return false;
            }
            if ($new === null) {
                apcu_delete($entry);
                return true;
            }
            return apcu_store($entry, $new, $ttl) || throw new StoreException('APCu refused the value (out of shared memory: raise apc.shm_size)');
        });
    }

    public function count(): int
    {
        return (new \APCUIterator($this->pattern, \APC_ITER_NONE))->getTotalCount();
    }

    public function scan(string $cursor = '', int $limit = 100): array
    {
        if ($limit < 1) {
            throw new \ValueError('scan() needs a limit ≥ 1');
        }
        // The cursor is the last key returned ("k" + key): keys come in byte order, so each comes once.
        $after = $cursor === '' ? null : substr($cursor, 1);
        $length = \strlen($this->prefix);
        $keys = [];
        foreach (new \APCUIterator($this->pattern, \APC_ITER_KEY) as $item) {
            \assert(\is_array($item) && \is_string($item['key']));
            $key = substr($item['key'], $length);
            if ($after === null || strcmp($key, $after) > 0) {
                $keys[] = $key;
            }
        }
        sort($keys, \SORT_STRING);
        $page = \array_slice($keys, 0, $limit);
        return [\count($keys) > $limit ? 'k' . $page[$limit - 1] : '', $page];
    }

    public function evictions(): int
    {
        $count = apcu_fetch($this->evictionKey);
        return \is_int($count) ? $count : 0;
    }

    /** APCu's own clock (not the Unix time in every build): the creation time of an entry just written. */
    private static function apcuNow(): int
    {
        apcu_store(self::CLOCK, 1);
        $info = apcu_key_info(self::CLOCK);
        return \is_array($info) && \is_int($info['creation_time'] ?? null) ? $info['creation_time'] : time();
    }

    private function beforeWrite(): void
    {
        if (++$this->writes >= $this->checkEvery) {
            $this->bound();
        }
    }

    /** Every $checkEvery writes of this process: evicts when APCu holds too many entries or has little memory left. */
    private function bound(): void
    {
        $this->writes = 0;
        $memory = apcu_sma_info(true);
        $low = \is_array($memory) && \is_int($memory['avail_mem'] ?? null) && \is_int($memory['seg_size'] ?? null)
            && \is_int($memory['num_seg'] ?? null) && $memory['avail_mem'] < $memory['num_seg'] * $memory['seg_size'] / 8;
        $info = apcu_cache_info(true);
        if ($low || (\is_array($info) && $info['num_entries'] > $this->maxEntries)) {
            $this->evict($low);
        }
    }

    /** Removes this store's expired keys, then the soonest to expire, down to 15/16 of the bound. */
    private function evict(bool $lowMemory): void
    {
        $now = self::apcuNow();
        $expiries = [];
        foreach (new \APCUIterator($this->pattern, \APC_ITER_KEY | \APC_ITER_TTL | \APC_ITER_CTIME) as $item) {
            \assert(\is_array($item) && \is_string($item['key']) && \is_int($item['ttl']) && \is_int($item['creation_time']));
            $key = $item['key'];
            $expires = $item['ttl'] === 0 ? \PHP_INT_MAX : $item['creation_time'] + $item['ttl'];
            if ($expires < $now) {
                apcu_delete($key);
                continue;
            }
            $expiries[$key] = $expires;
        }
        $live = \count($expiries);
        $keep = $lowMemory ? $live - max(1, intdiv($live, 8)) : min($live, $this->maxEntries - max(1, intdiv($this->maxEntries, 16)));
        if ($live <= $keep) {
            return;
        }
        asort($expiries);
        $evicted = 0;
        foreach (\array_slice(array_keys($expiries), 0, $live - $keep) as $key) {
            $evicted += (int) apcu_delete((string) $key);
        }
        apcu_inc($this->evictionKey, $evicted);
    }
}
