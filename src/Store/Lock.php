<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * A named lock in a Store, held by one holder of the whole node (or of every node, on a shared store):
 * acquire() adds "lock:<name>" with a random token, release() deletes it only while it still holds that
 * token (compareAndSet), so a holder whose lock expired never releases the next holder's.
 *
 * The lock expires $ttl seconds after it was taken, so a holder that crashed cannot wedge it: work that
 * takes longer MUST NOT rely on it. wait() polls (2 ms, doubling up to 50 ms) and, inside a Fiber, suspends
 * it between polls instead of blocking the worker.
 */
final class Lock
{
    private ?string $token = null;

    private readonly string $key;

    public function __construct(private readonly Store $store, string $name, private readonly int $ttl = 30)
    {
        if ($ttl < 1) {
            throw new \ValueError('A lock needs a TTL ≥ 1 second');
        }
        $this->key = 'lock:' . $name;
    }

    /** Takes the lock if it is free; true when this holder has it now. */
    public function acquire(): bool
    {
        if ($this->token !== null) {
            throw new \Error('This lock is held already: release() it first');
        }
        $token = bin2hex(random_bytes(12));
        if (!$this->store->add($this->key, $token, $this->ttl)) {
            return false;
        }
        $this->token = $token;
        return true;
    }

    /** Waits up to $timeout seconds for the lock; true when this holder has it. */
    public function wait(float $timeout): bool
    {
        $deadline = microtime(true) + $timeout;
        for ($pause = 0.002; !$this->acquire(); $pause = min(0.05, $pause * 2)) {
            if (microtime(true) + $pause > $deadline) {
                return false;
            }
            self::pause($pause);
        }
        return true;
    }

    public function release(): void
    {
        if ($this->token !== null) {
            $this->store->compareAndSet($this->key, $this->token, null);
            $this->token = null;
        }
    }

    public function held(): bool
    {
        return $this->token !== null && $this->store->get($this->key) === $this->token;
    }

    /** Sleeps: suspends the Fiber (the worker keeps serving), or blocks outside one. */
    public static function pause(float $seconds): void
    {
        if (\Fiber::getCurrent() !== null) {
            \Kiln\Loop\delay($seconds);
        } else {
            usleep((int) ($seconds * 1e6));
        }
    }
}
