<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * A named 64-bit counter in a Store, exact under any number of concurrent workers (Store::increment() is
 * atomic). Its key is "counter:<name>"; it never expires, but a full store may evict it (an evicted counter
 * starts again from 0, and the store counts the eviction).
 */
final class Counter
{
    private readonly string $key;

    public function __construct(private readonly Store $store, public readonly string $name)
    {
        if ($name === '') {
            throw new \ValueError('A counter needs a name');
        }
        $this->key = 'counter:' . $name;
    }

    /** Adds $by (negative to subtract) and returns the new value. */
    public function increment(int $by = 1): int
    {
        return $this->store->increment($this->key, $by);
    }

    public function decrement(int $by = 1): int
    {
        return $this->store->increment($this->key, -$by);
    }

    public function value(): int
    {
        $value = $this->store->get($this->key);
        return \is_int($value) ? $value : 0;
    }

    public function reset(): void
    {
        $this->store->delete($this->key);
    }
}
