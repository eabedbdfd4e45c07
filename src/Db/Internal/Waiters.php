<?php

declare(strict_types=1);

namespace Kiln\Db\Internal;

use Kiln\Db\Connection;
use Kiln\Db\PoolTimeoutException;
use Kiln\Loop\Cancellation;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;

/**
 * The Fibers waiting for a pool's connection, longest first. Each wait ends in exactly one of: a connection
 * handed over, null (a place opened up: try again), its timeout, its cancellation, or failAll().
 *
 * @internal
 */
final class Waiters
{
    /** @var array<int, Suspension> */
    private array $waiting = [];
    private int $next = 0;

    /** @param \Closure(): string $timeoutMessage */
    public function wait(float $timeout, ?Cancellation $cancellation, \Closure $timeoutMessage): ?Connection
    {
        $cancellation?->throwIfRequested();
        $id = $this->next++;
        $suspension = Loop::getSuspension();
        $this->waiting[$id] = $suspension;
        $timer = Loop::delay($timeout, function () use ($id, $suspension, $timeoutMessage): void {
            if (isset($this->waiting[$id])) {
                unset($this->waiting[$id]);
                $suspension->throw(new PoolTimeoutException($timeoutMessage()));
            }
        });
        $subscription = $cancellation?->subscribe(function (\Throwable $e) use ($id, $suspension): void {
            if (isset($this->waiting[$id])) {
                unset($this->waiting[$id]);
                $suspension->throw($e);
            }
        });
        try {
            $connection = $suspension->suspend();
        } finally {
            unset($this->waiting[$id]);
            Loop::cancel($timer);
            if ($subscription !== null) {
                $cancellation?->unsubscribe($subscription);
            }
        }
        \assert($connection === null || $connection instanceof Connection);

        return $connection;
    }

    /** Wakes the longest waiter with $connection (null: "try again"); false when nobody waits. */
    public function handOver(?Connection $connection): bool
    {
        foreach ($this->waiting as $id => $suspension) {
            unset($this->waiting[$id]);
            $suspension->resume($connection);

            return true;
        }

        return false;
    }

    public function failAll(\Throwable $error): void
    {
        $waiting = $this->waiting;
        $this->waiting = [];
        foreach ($waiting as $suspension) {
            $suspension->throw($error);
        }
    }

    public function count(): int
    {
        return \count($this->waiting);
    }
}
