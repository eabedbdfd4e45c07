<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Store\Internal\FileSegment;
use Kiln\Store\Internal\Segment;

/**
 * A fixed-size hash table over a Segment: $buckets buckets of $slots slots of $slotSize bytes.
 * A key lives in the bucket its hash picks; a slot holds the key's 128-bit hash, its expiry and its
 * serialized value. A write takes the key's slot, else an empty or expired one, else evicts the live
 * slot that expires soonest (counted in evictions()), so the table never fills up. One node-wide lock
 * serializes every call.
 *
 * The backing is a file (put it in /dev/shm: memory, not disk) locked with flock, which works on any
 * PHP. (System V memory through ext-shmop was measured 1.2–1.9× faster on update() but keys its segment
 * by ftok(), which can collide between two nodes and leaks kernel memory when not removed: not worth it
 * next to APCu's 4–5×.) Any process that names the same path shares the table; the first to open it
 * fixes the geometry. Defaults: 16,384 buckets × 8 slots × 128 bytes = 16 MiB of sparse file (pages are
 * only touched as used), values up to 106 serialized bytes.
 */
final class MemoryTable implements SharedState
{
    private const MAGIC = "KILNST01";
    private const HEADER = 64;
    private const SLOT_HEAD = 22; // id (16) + expires (4) + length (2)
    private const NEVER = 0xFFFFFFFF;
    private const EVICTIONS = 20; // header: magic (8), geometry (12), evictions (8)

    private bool $open = false;

    private bool $busy = false;

    public static function file(string $path, int $buckets = 16384, int $slots = 8, int $slotSize = 128): self
    {
        return new self(new FileSegment($path), $buckets, $slots, $slotSize);
    }

    private function __construct(
        private readonly Segment $segment,
        private int $buckets = 16384,
        private int $slots = 8,
        private int $slotSize = 128,
    ) {
        if ($buckets < 1 || $slots < 1 || $slotSize < self::SLOT_HEAD + 16 || $slotSize > 65535) {
            throw new \ValueError('A slot table needs ≥ 1 bucket, ≥ 1 slot per bucket and 38..65535 bytes per slot');
        }
    }

    /** The largest serialized value a slot holds. */
    public function capacity(): int
    {
        return $this->slotSize - self::SLOT_HEAD;
    }

    public function update(string $key, \Closure $fn, int $ttlSeconds): ?array
    {
        if ($ttlSeconds < 0) {
            throw new \ValueError("TTL must be ≥ 0 seconds (0: never expires), got $ttlSeconds");
        }
        return $this->change($key, static fn(?array $current): array => [$fn($current), $ttlSeconds]);
    }

    /**
     * update() whose callback also gives the entry's TTL, from what it found (a write that keeps an expiry).
     *
     * @param \Closure(?array<mixed>): array{?array<mixed>, int} $fn the live value → [new value or null, TTL seconds]
     * @return ?array<mixed> the new value
     */
    public function change(string $key, \Closure $fn): ?array
    {
        return $this->locked(function () use ($key, $fn): ?array {
            [$id, $offset, $bucket] = $this->bucket($key);
            $now = time();
            [$found, $current] = $this->find($bucket, $id, $now);
            [$new, $ttlSeconds] = $fn($current);
            if ($new === null) {
                if ($found !== null) {
                    $this->segment->write($offset + $found * $this->slotSize, str_repeat("\0", self::SLOT_HEAD));
                }
                return null;
            }
            if ($ttlSeconds < 0) {
                throw new \ValueError("TTL must be ≥ 0 seconds (0: never expires), got $ttlSeconds");
            }
            $payload = serialize($new);
            if (\strlen($payload) > $this->capacity()) {
                throw new \ValueError(\sprintf('A value of %d bytes does not fit this store (%d at most)', \strlen($payload), $this->capacity()));
            }
            $slot = $found ?? $this->freeSlot($bucket, $now);
            $expires = $ttlSeconds === 0 ? self::NEVER : min($now + $ttlSeconds, self::NEVER - 1);
            $this->segment->write($offset + $slot * $this->slotSize, $id . pack('Nn', $expires, \strlen($payload)) . $payload);
            return $new;
        });
    }

    public function get(string $key): ?array
    {
        return $this->locked(function () use ($key): ?array {
            [$id, , $bucket] = $this->bucket($key);
            return $this->find($bucket, $id, time())[1];
        });
    }

    public function delete(string $key): void
    {
        $this->update($key, static fn(): ?array => null, 0);
    }

    /** Live entries removed to make room since the table was made (a count kept in its header). */
    public function evictions(): int
    {
        return $this->locked($this->readEvictions(...));
    }

    /**
     * The live values of up to $buckets buckets from bucket $from: [the next bucket, or null at the end, values].
     *
     * @return array{?int, list<array<mixed>>}
     */
    public function scan(int $from, int $buckets): array
    {
        return $this->locked(function () use ($from, $buckets): array {
            $values = [];
            $now = time();
            $end = min($this->buckets, max(0, $from) + max(1, $buckets));
            for ($index = max(0, $from); $index < $end; $index++) {
                $bucket = $this->segment->read(self::HEADER + $index * $this->slots * $this->slotSize, $this->slots * $this->slotSize);
                for ($at = 0; $at < \strlen($bucket); $at += $this->slotSize) {
                    [$expires, $length] = $this->head($bucket, $at);
                    if ($expires !== 0 && $expires >= $now) {
                        $value = @unserialize(substr($bucket, $at + self::SLOT_HEAD, $length), ['allowed_classes' => false]);
                        \is_array($value) && $values[] = $value;
                    }
                }
            }
            return [$end < $this->buckets ? $end : null, $values];
        });
    }

    /** Removes the backing segment (for the node's last process). */
    public function remove(): void
    {
        $this->segment->remove();
        $this->open = false;
    }

    /**
     * @template T
     * @param \Closure(): T $body
     * @return T
     */
    private function locked(\Closure $body): mixed
    {
        if ($this->busy) {
            throw new \Error('SharedState is not re-entrant: the update callback must not suspend or call the store');
        }
        $this->open || $this->openTable();
        $this->busy = true;
        $this->segment->lock();
        try {
            return $body();
        } finally {
            $this->segment->unlock();
            $this->busy = false;
        }
    }

    private function openTable(): void
    {
        $this->segment->lock();
        try {
            $size = $this->segment->open(self::HEADER + $this->buckets * $this->slots * $this->slotSize);
            $header = $this->segment->read(0, 20);
            if (str_starts_with($header, self::MAGIC)) {
                // The first process of the node chose the geometry; everyone else adopts it.
                [$this->buckets, $this->slots, $this->slotSize] = [self::u32($header, 8), self::u32($header, 12), self::u32($header, 16)];
            } elseif (trim($header, "\0") === '') {
                $this->segment->write(0, self::MAGIC . pack('NNN', $this->buckets, $this->slots, $this->slotSize));
            } else {
                throw new StoreException('The shared state segment holds something else (no Kiln header)');
            }
            if ($size < self::HEADER + $this->buckets * $this->slots * $this->slotSize) {
                throw new StoreException('The shared state segment is smaller than its geometry: corrupt or foreign');
            }
        } finally {
            $this->segment->unlock();
        }
        $this->open = true;
    }

    /** @return array{string, int, string} key id, bucket offset, bucket bytes */
    private function bucket(string $key): array
    {
        $id = hash('xxh128', $key, true);
        $offset = self::HEADER + (self::u32($id, 0) % $this->buckets) * $this->slots * $this->slotSize;
        return [$id, $offset, $this->segment->read($offset, $this->slots * $this->slotSize)];
    }

    /** @return array{?int, ?array<mixed>} slot and value of the live entry with this id */
    private function find(string $bucket, string $id, int $now): array
    {
        for ($slot = 0; $slot < $this->slots; $slot++) {
            $at = $slot * $this->slotSize;
            if (substr_compare($bucket, $id, $at, 16) !== 0) {
                continue;
            }
            [$expires, $length] = $this->head($bucket, $at);
            if ($expires === 0 || $expires < $now) {
                continue; // empty or expired: a live copy may sit in a later slot
            }
            $value = @unserialize(substr($bucket, $at + self::SLOT_HEAD, $length), ['allowed_classes' => false]);
            return [$slot, \is_array($value) ? $value : null];
        }
        return [null, null];
    }

    /** An empty or expired slot, else the live one that expires soonest, counted as an eviction. */
    private function freeSlot(string $bucket, int $now): int
    {
        $victim = 0;
        $soonest = PHP_INT_MAX;
        for ($slot = 0; $slot < $this->slots; $slot++) {
            [$expires] = $this->head($bucket, $slot * $this->slotSize);
            if ($expires === 0 || $expires < $now) {
                return $slot; // empty or expired
            }
            if ($expires < $soonest) {
                [$victim, $soonest] = [$slot, $expires];
            }
        }
        $this->segment->write(self::EVICTIONS, pack('J', $this->readEvictions() + 1));
        return $victim;
    }

    private function readEvictions(): int
    {
        $count = unpack('J', $this->segment->read(self::EVICTIONS, 8));
        return \is_array($count) && \is_int($count[1] ?? null) ? $count[1] : 0;
    }

    /** @return array{int, int} expires, length */
    private function head(string $bucket, int $at): array
    {
        return [self::u32($bucket, $at + 16), self::u32($bucket, $at + 18) & 0xFFFF];
    }

    private static function u32(string $bytes, int $offset): int
    {
        $value = unpack('N', $bytes, $offset);
        return \is_array($value) && \is_int($value[1] ?? null) ? $value[1] : throw new StoreException('Truncated shared state slot');
    }
}
