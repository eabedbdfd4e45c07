<?php

declare(strict_types=1);

namespace Kiln\Db\Internal;

use Kiln\Db\Connection;
use Kiln\Db\PoolTimeoutException;
use Kiln\Loop\Cancellation;
use Kiln\Loop\Fifo;
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
    /** @var Fifo<Suspension> */
    private readonly Fifo $waiting;

    public function __construct()
    {
        $this->waiting = new Fifo();
    }

    /** @param \Closure(): string $timeoutMessage */
    public function wait(float $timeout, ?Cancellation $cancellation, \Closure $timeoutMessage): ?Connection
    {
        $cancellation?->throwIfRequested();
        $suspension = Loop::getSuspension();
        $id = $this->waiting->push($suspension);
        $timer = Loop::delay($timeout, function () use ($id, $suspension, $timeoutMessage): void {
            if ($this->waiting->remove($id)) {
                $suspension->throw(new PoolTimeoutException($timeoutMessage()));
            }
        });
        $subscription = $cancellation?->subscribe(function (\Throwable $e) use ($id, $suspension): void {
            if ($this->waiting->remove($id)) {
                $suspension->throw($e);
            }
        });
        try {
            $connection = $suspension->suspend();
        } finally {
            $this->waiting->remove($id);
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
        $suspension = $this->waiting->shift();
        if ($suspension === null) {
            return false;
        }
        $suspension->resume($connection);

        return true;
    }

    public function failAll(\Throwable $error): void
    {
        foreach ($this->waiting->drain() as $suspension) {
            $suspension->throw($error);
        }
    }

    public function count(): int
    {
        return $this->waiting->count();
    }
}
