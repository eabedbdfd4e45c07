<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

use Kiln\Loop\Cancellation;
use Kiln\Loop\Deferred;
use Kiln\Loop\Loop;

/**
 * Keep-alive connections per origin (scheme+host+port), at most $max open per origin.
 *
 * - acquire() hands out an idle connection that still looks usable (most recently used first), else
 *   opens one, else waits for a release() or discard() of that origin.
 * - Every acquired connection MUST end in exactly one release() (response fully read, reusable) or
 *   discard() (anything else); a second call is ignored.
 * - Idle connections are closed after $idleTimeout seconds; their timers do not keep the loop alive.
 *
 * @internal
 */
final class ConnectionPool
{
    /** @var array<string, list<Connection>> */
    private array $idle = [];
    /** @var array<string, int> */
    private array $open = [];
    /** @var array<int, true> spl_object_id of every connection counted in $open and not idle */
    private array $busy = [];
    /** @var array<string, list<Deferred<null>>> */
    private array $waiting = [];

    public function __construct(
        private readonly int $max,
        private readonly float $idleTimeout,
    ) {}

    /**
     * @param \Closure(): Connection $connect opens a new connection
     */
    public function acquire(string $origin, \Closure $connect, Cancellation $cancellation, bool $fresh = false): Connection
    {
        $this->idle[$origin] ??= [];
        $this->waiting[$origin] ??= [];
        while (true) {
            while (!$fresh && ($connection = \array_pop($this->idle[$origin])) !== null) {
                $this->cancelTimer($connection);
                $this->busy[\spl_object_id($connection)] = true;
                if ($connection->isUsable()) {
                    return $connection;
                }
                $this->discard($connection); // closed by the server while idle: open another
            }
            if (($this->open[$origin] ?? 0) < $this->max) {
                $this->open[$origin] = ($this->open[$origin] ?? 0) + 1;
                try {
                    $connection = $connect();
                } catch (\Throwable $e) {
                    $this->open[$origin]--;
                    $this->wakeOne($origin);
                    throw $e;
                }
                $this->busy[\spl_object_id($connection)] = true;

                return $connection;
            }
            if ($fresh && $this->idle[$origin] !== []) {
                $this->discard($this->takeIdle($origin)); // make room for the fresh connection
                continue;
            }
            $this->wait($origin, $cancellation);
        }
    }

    public function release(Connection $connection): void
    {
        if (!$this->unbusy($connection)) {
            return;
        }
        $origin = $connection->origin;
        $this->idle[$origin][] = $connection;
        $connection->idleTimer = Loop::delay($this->idleTimeout, function () use ($connection): void {
            $connection->idleTimer = null;
            $this->idle[$connection->origin] = \array_values(\array_filter(
                $this->idle[$connection->origin],
                static fn(Connection $c): bool => $c !== $connection,
            ));
            $this->busy[\spl_object_id($connection)] = true;
            $this->discard($connection);
        });
        Loop::unreference($connection->idleTimer);
        $this->wakeOne($origin);
    }

    public function discard(Connection $connection): void
    {
        $connection->close();
        if ($this->unbusy($connection)) {
            $this->open[$connection->origin]--;
            $this->wakeOne($connection->origin);
        }
    }

    /** Closes every idle connection (open ones close when their responses end). */
    public function closeIdle(): void
    {
        foreach (\array_keys($this->idle) as $origin) {
            while ($this->idle[$origin] !== []) {
                $this->discard($this->takeIdle($origin));
            }
        }
    }

    private function takeIdle(string $origin): Connection
    {
        $connection = \array_shift($this->idle[$origin]);
        \assert($connection !== null);
        $this->cancelTimer($connection);
        $this->busy[\spl_object_id($connection)] = true;

        return $connection;
    }

    private function wait(string $origin, Cancellation $cancellation): void
    {
        /** @var Deferred<null> $deferred */
        $deferred = new Deferred();
        $this->waiting[$origin][] = $deferred;
        try {
            $deferred->getFuture()->await($cancellation);
        } finally {
            $this->waiting[$origin] = \array_values(\array_filter($this->waiting[$origin], static fn(Deferred $d): bool => $d !== $deferred));
            if ($deferred->isComplete() && $cancellation->isRequested()) {
                $this->wakeOne($origin); // we were woken but give up: pass the turn on
            }
        }
    }

    private function wakeOne(string $origin): void
    {
        $deferred = \array_shift($this->waiting[$origin]);
        $deferred?->complete();
    }

    private function unbusy(Connection $connection): bool
    {
        $id = \spl_object_id($connection);
        if (!isset($this->busy[$id])) {
            return false;
        }
        unset($this->busy[$id]);

        return true;
    }

    private function cancelTimer(Connection $connection): void
    {
        if ($connection->idleTimer !== null) {
            Loop::cancel($connection->idleTimer);
            $connection->idleTimer = null;
        }
    }
}
