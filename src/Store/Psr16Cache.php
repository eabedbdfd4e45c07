<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Store\Internal\InvalidCacheKeyException;
use Psr\SimpleCache\CacheInterface;

/**
 * PSR-16 (psr/simple-cache 2 or 3, which the application installs) over a Cache. PSR-16 asks for every
 * serializable value, objects included, so values are stored serialize()d (a Cache alone refuses objects);
 * keys are checked as PSR-16 says (not empty, none of {}()/\@:). The TTL is whole seconds: a DateInterval
 * or int is rounded up, and a TTL ≤ 0 deletes the entry.
 */
final class Psr16Cache implements CacheInterface
{
    public function __construct(private readonly Cache $cache) {}

    public function get(string $key, mixed $default = null): mixed
    {
        $stored = $this->cache->get(self::key($key));
        return \is_string($stored) ? unserialize($stored) : $default;
    }

    public function set(string $key, mixed $value, null|int|\DateInterval $ttl = null): bool
    {
        $seconds = self::seconds($ttl);
        if ($seconds === null) {
            $this->cache->delete(self::key($key));
            return true;
        }
        $this->cache->set(self::key($key), serialize($value), $seconds);
        return true;
    }

    public function delete(string $key): bool
    {
        $this->cache->delete(self::key($key));
        return true;
    }

    public function clear(): bool
    {
        $this->cache->clear();
        return true;
    }

    /** @return iterable<string, mixed> */
    public function getMultiple(iterable $keys, mixed $default = null): iterable
    {
        $values = [];
        foreach ($keys as $key) {
            $values[$key] = $this->get($key, $default);
        }
        return $values;
    }

    /** @param iterable<mixed> $values */
    public function setMultiple(iterable $values, null|int|\DateInterval $ttl = null): bool
    {
        foreach ($values as $key => $value) {
            $this->set(\is_string($key) ? $key : throw new InvalidCacheKeyException('PSR-16 keys are strings'), $value, $ttl);
        }
        return true;
    }

    public function deleteMultiple(iterable $keys): bool
    {
        foreach ($keys as $key) {
            $this->delete($key);
        }
        return true;
    }

    public function has(string $key): bool
    {
        return $this->cache->has(self::key($key));
    }

    private static function key(string $key): string
    {
        if ($key === '' || strpbrk($key, '{}()/\@:') !== false) {
            throw new InvalidCacheKeyException("Invalid PSR-16 cache key '$key': not empty, and none of {}()/\\@:");
        }
        return 'psr16:' . $key;
    }

    /** Whole seconds (0: no expiry), or null when the TTL says the entry is already gone. */
    private static function seconds(null|int|\DateInterval $ttl): ?int
    {
        if ($ttl === null) {
            return 0;
        }
        if ($ttl instanceof \DateInterval) {
            $now = new \DateTimeImmutable();
            $ttl = (int) ceil((float) $now->add($ttl)->format('U.u') - (float) $now->format('U.u'));
        }
        return $ttl > 0 ? $ttl : null;
    }
}
