<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Store\Internal\Values;

/**
 * A Store in a MemoryTable (a /dev/shm file under one node-wide lock): the node's store where APCu is
 * missing. Each slot holds [key, value, expiry], so scan() can name the keys and increment() and a
 * failed compareAndSet() keep the expiry (MemoryTable::change(): one locked step per call). A full bucket evicts the entry that expires soonest (MemoryTable).
 * Values are bounded by the slot size: about 1,000 serialized bytes with the node's geometry (NodeState).
 */
final class TableStore implements Store
{
    /** Buckets read per scan() page. */
    private const SCAN_BUCKETS = 64;

    public function __construct(private readonly MemoryTable $table) {}

    public function get(string $key): mixed
    {
        return $this->table->get($key)['v'] ?? null;
    }

    public function set(string $key, mixed $value, int $ttl = 0): void
    {
        $this->check($value, $ttl);
        $this->table->update($key, static fn(): array => self::entry($key, $value, $ttl), $ttl);
    }

    public function add(string $key, mixed $value, int $ttl = 0): bool
    {
        $this->check($value, $ttl);
        $added = false;
        $this->table->update($key, static function (?array $current) use ($key, $value, $ttl, &$added): array {
            if ($current !== null) {
                return $current;
            }
            $added = true;
            return self::entry($key, $value, $ttl);
        }, $ttl);
        return $added;
    }

    public function delete(string $key): bool
    {
        $existed = false;
        $this->table->update($key, static function (?array $current) use (&$existed): ?array {
            $existed = $current !== null;
            return null;
        }, 0);
        return $existed;
    }

    public function increment(string $key, int $by = 1, int $ttl = 0): int
    {
        Values::ttl($ttl);
        $entry = $this->table->change($key, static function (?array $current) use ($key, $by, $ttl): array {
            if ($current === null) {
                return [self::entry($key, $by, $ttl), $ttl];
            }
            if (!\is_int($current['v'])) {
                throw new \ValueError("Key '$key' holds a " . get_debug_type($current['v']) . ', not an integer: it cannot be incremented');
            }
            $sum = $current['v'] + $by;
            if (\is_float($sum)) { // @phpstan-ignore function.impossibleType (int + int overflows to float)
                throw new \ValueError("Incrementing '$key' by $by would overflow a 64-bit integer");
            }
            return [['v' => $sum] + $current, self::remaining($current)];
        });
        \assert(\is_array($entry) && \is_int($entry['v']));
        return $entry['v'];
    }

    public function compareAndSet(string $key, mixed $expected, mixed $new, int $ttl = 0): bool
    {
        if ($new !== null) {
            $this->check($new, $ttl);
        }
        Values::ttl($ttl);
        $written = false;
        $this->table->change($key, static function (?array $current) use ($key, $expected, $new, $ttl, &$written): array {
            if ($expected === null ? $current !== null : ($current === null || $current['v'] !== $expected)) {
                return [$current, $current === null ? 0 : self::remaining($current)];
            }
            $written = true;
            return [$new === null ? null : self::entry($key, $new, $ttl), $ttl];
        });
        return $written;
    }

    public function count(): int
    {
        $count = 0;
        for ($from = 0; $from !== null;) {
            [$from, $values] = $this->table->scan($from, 1024);
            $count += \count($values);
        }
        return $count;
    }

    public function scan(string $cursor = '', int $limit = 100): array
    {
        if ($limit < 1) {
            throw new \ValueError('scan() needs a limit ≥ 1');
        }
        // The cursor is a bucket number: a page is whole buckets, so a key is never cut between two pages.
        [$next, $values] = $this->table->scan((int) $cursor, max(1, min(self::SCAN_BUCKETS, $limit)));
        $keys = [];
        foreach ($values as $value) {
            \is_string($value['k'] ?? null) && $keys[] = $value['k'];
        }
        return [$next === null ? '' : (string) $next, $keys];
    }

    public function evictions(): int
    {
        return $this->table->evictions();
    }

    private function check(mixed $value, int $ttl): void
    {
        Values::check($value, $this->table->capacity());
        Values::ttl($ttl);
    }

    /** @return array{k: string, v: mixed, e: int} */
    private static function entry(string $key, mixed $value, int $ttl): array
    {
        return ['k' => $key, 'v' => $value, 'e' => $ttl === 0 ? 0 : time() + $ttl];
    }

    /**
     * The TTL that keeps an entry's expiry when it is written again: its remaining seconds (rounded up), 0 for
     * an entry that never expires.
     *
     * @param array<mixed> $entry
     */
    private static function remaining(array $entry): int
    {
        $expires = \is_int($entry['e'] ?? null) ? $entry['e'] : 0;
        return $expires === 0 ? 0 : max(1, $expires - time());
    }
}
