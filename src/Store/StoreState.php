<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * SharedState over a Store: update() reads, runs $fn and writes with compareAndSet(), again while another process
 * wrote the key in between. Over a RedisStore this makes state shared by every node, as the SSE event ids and their
 * replay buffer are with `--redis` (a reconnecting client may land on any node).
 *
 * $fn may run more than once for one update() (once per lost race); like every SharedState closure it must be quick
 * and free of side effects.
 */
final class StoreState implements SharedState
{
    /** Lost races after which update() gives up: far more than any contention seen, and never a loop forever. */
    private const TRIES = 1000;

    /** True while an update's closure runs: calling the state from it is a programming error. */
    private bool $inside = false;

    public function __construct(private readonly Store $store, private readonly string $prefix = 'state:') {}

    public function update(string $key, \Closure $fn, int $ttlSeconds): ?array
    {
        $this->outside();
        if ($ttlSeconds < 0) {
            throw new \ValueError("TTL must be ≥ 0 seconds (0: never expires), got $ttlSeconds");
        }
        for ($try = 0; $try < self::TRIES; $try++) {
            $current = $this->store->get($this->prefix . $key);
            $current = \is_array($current) ? $current : null;
            $this->inside = true;
            try {
                $next = $fn($current);
            } finally {
                $this->inside = false;
            }
            if ($this->store->compareAndSet($this->prefix . $key, $current, $next, $ttlSeconds)) {
                return $next;
            }
        }
        throw new StoreException("The shared state '$key' changed under every one of " . self::TRIES . ' tries to update it');
    }

    public function get(string $key): ?array
    {
        $this->outside();
        $value = $this->store->get($this->prefix . $key);
        return \is_array($value) ? $value : null;
    }

    public function delete(string $key): void
    {
        $this->outside();
        $this->store->delete($this->prefix . $key);
    }

    private function outside(): void
    {
        if ($this->inside) {
            throw new \Error('A SharedState update closure must not call the state again');
        }
    }
}
