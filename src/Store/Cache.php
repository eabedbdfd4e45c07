<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * A cache over a Store: entries with a TTL and tags, invalidation by tag, and remember(), which computes a
 * missing entry in one worker of the node while the others wait for it.
 *
 * Tags: each tag has a random token under "cache-tag:<tag>"; an entry keeps the tokens of its tags when it
 * is written, and reads as a miss once any of them changed. invalidateTags() gives each tag a new token, so
 * it costs one write per tag whatever the number of entries; stale entries go when they expire or are
 * evicted. A tag token that is evicted or absent also makes its entries miss (never a stale hit).
 *
 * Over a remote Store (Redis) a NearCache keeps copies in the node's memory, dropped on every node at a change.
 *
 * Values are what a Store takes (scalars and arrays of them) plus null; Psr16Cache serializes objects.
 */
final class Cache
{
    private const ENTRY = 'cache:';
    private const TAG = 'cache-tag:';

    public function __construct(
        private readonly Store $store,
        /** How long remember() lets one worker compute before another may take over (seconds). */
        private readonly int $lockTtl = 30,
        /** A node-local first level, when $store is remote (Redis): see NearCache for what it may serve. */
        private readonly ?NearCache $near = null,
    ) {}

    public function get(string $key, mixed $default = null): mixed
    {
        [$found, $value] = $this->lookup($key);
        return $found ? $value : $default;
    }

    public function has(string $key): bool
    {
        return $this->lookup($key)[0];
    }

    /**
     * @param list<string> $tags
     * @throws \ValueError for a value a Store cannot hold
     */
    public function set(string $key, mixed $value, int $ttl = 0, array $tags = []): void
    {
        $this->write($key, $value, $ttl, $this->tokens($tags));
    }

    public function delete(string $key): bool
    {
        $deleted = $this->store->delete(self::ENTRY . $key);
        $this->near?->forget($key);
        return $deleted;
    }

    /** Every entry with any of these tags reads as a miss from now on. */
    public function invalidateTags(string ...$tags): void
    {
        foreach ($tags as $tag) {
            $this->store->set(self::TAG . $tag, self::token());
        }
        $tags === [] || $this->near?->forgetTags(...$tags);
    }

    /**
     * The entry under $key, else what $compute returns, stored for $ttl seconds. While one caller of the node
     * computes, the others calling remember() for the same key wait (suspending their Fiber) and get its
     * result; if it throws, the next waiter computes. A computation that outlives the lock's TTL lets a
     * second caller start.
     *
     * @template T
     * @param \Closure(): T $compute
     * @param list<string> $tags
     * @return T
     */
    public function remember(string $key, int $ttl, \Closure $compute, array $tags = []): mixed
    {
        [$found, $value] = $this->lookup($key);
        if ($found) {
            /** @var T $value */
            return $value;
        }
        $lock = new Lock($this->store, self::ENTRY . $key, $this->lockTtl);
        for ($pause = 0.002; !$lock->acquire(); $pause = min(0.05, $pause * 2)) {
            Lock::pause($pause);
            [$found, $value] = $this->lookup($key);
            if ($found) {
                /** @var T $value */
                return $value;
            }
        }
        try {
            [$found, $value] = $this->lookup($key); // written while this caller waited for the lock
            if (!$found) {
                // The tags' tokens as they were before computing: an invalidation meanwhile makes this a miss.
                $tokens = $this->tokens($tags);
                $value = $compute();
                $this->write($key, $value, $ttl, $tokens);
            }
            /** @var T $value */
            return $value;
        } finally {
            $lock->release();
        }
    }

    /** Removes every entry (a scan of the store: for tests and maintenance, not for requests). */
    public function clear(): void
    {
        $cursor = '';
        do {
            [$cursor, $keys] = $this->store->scan($cursor, 500);
            foreach ($keys as $key) {
                if (str_starts_with($key, self::ENTRY)) {
                    $this->store->delete($key);
                    $this->near?->forget(substr($key, \strlen(self::ENTRY)));
                }
            }
        } while ($cursor !== '');
    }

    /** @param array<string, string> $tokens */
    private function write(string $key, mixed $value, int $ttl, array $tokens): void
    {
        $this->store->set(self::ENTRY . $key, $tokens === [] ? ['v' => $value] : ['v' => $value, 't' => $tokens], $ttl);
        $this->near?->forget($key);
    }

    /** @return array{bool, mixed} found, value */
    private function lookup(string $key): array
    {
        if ($this->near !== null) {
            [$found, $value] = $this->near->get($key);
            if ($found) {
                return [true, $value];
            }
        }
        $entry = $this->store->get(self::ENTRY . $key);
        if (!\is_array($entry) || !\array_key_exists('v', $entry)) {
            return [false, null];
        }
        foreach (\is_array($entry['t'] ?? null) ? $entry['t'] : [] as $tag => $token) {
            if ($this->store->get(self::TAG . $tag) !== $token) {
                return [false, null];
            }
        }
        $this->near?->put($key, $entry['v'], array_map('strval', array_keys(\is_array($entry['t'] ?? null) ? $entry['t'] : [])));
        return [true, $entry['v']];
    }

    /**
     * @param list<string> $tags
     * @return array<string, string>
     */
    private function tokens(array $tags): array
    {
        $tokens = [];
        foreach ($tags as $tag) {
            $token = $this->store->get(self::TAG . $tag);
            if (!\is_string($token)) {
                $new = self::token();
                $token = $this->store->add(self::TAG . $tag, $new) ? $new : $this->store->get(self::TAG . $tag);
            }
            $tokens[$tag] = \is_string($token) ? $token : throw new StoreException("The token of cache tag '$tag' could not be kept");
        }
        return $tokens;
    }

    private static function token(): string
    {
        return bin2hex(random_bytes(8));
    }
}
