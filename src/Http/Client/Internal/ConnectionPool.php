<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

use Kiln\Loop\Cancellation;
use Kiln\Loop\Deferred;
use Kiln\Loop\KeyedPool;
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
    /** @var KeyedPool<Connection> */
    private readonly KeyedPool $connections;

    public function __construct(
        int $max,
        private readonly float $idleTimeout,
    ) {
        $this->connections = new KeyedPool($max);
    }

    /**
     * @param \Closure(): Connection $connect opens a new connection
     */
    public function acquire(string $origin, \Closure $connect, Cancellation $cancellation, bool $fresh = false): Connection
    {
        while (true) {
            while (!$fresh && ($connection = $this->connections->takeIdle($origin)) !== null) {
                $this->cancelTimer($connection);
                if ($connection->isUsable()) {
                    return $connection;
                }
                $this->discard($connection); // closed by the server while idle: open another
            }
            $connection = $this->connections->open($origin, $connect);
            if ($connection !== null) {
                return $connection;
            }
            if ($fresh && ($oldest = $this->connections->takeIdle($origin, newest: false)) !== null) {
                $this->cancelTimer($oldest);
                $this->discard($oldest); // make room for the fresh connection
                continue;
            }
            $this->wait($origin, $cancellation);
        }
    }

    public function release(Connection $connection): void
    {
        $origin = $connection->origin;
        if (!$this->connections->putBack($origin, $connection)) {
            return;
        }
        $connection->idleTimer = Loop::delay($this->idleTimeout, function () use ($connection): void {
            $connection->idleTimer = null;
            if ($this->connections->take($connection->origin, $connection)) {
                $this->discard($connection);
            }
        });
        Loop::unreference($connection->idleTimer);
        $this->connections->wakeOne($origin);
    }

    public function discard(Connection $connection): void
    {
        $connection->close();
        if ($this->connections->remove($connection->origin, $connection)) {
            $this->connections->wakeOne($connection->origin);
        }
    }

    /** Closes every idle connection (open ones close when their responses end). */
    public function closeIdle(): void
    {
        foreach ($this->connections->keys() as $origin) {
            while (($connection = $this->connections->takeIdle($origin, newest: false)) !== null) {
                $this->cancelTimer($connection);
                $this->discard($connection);
            }
        }
    }

    private function wait(string $origin, Cancellation $cancellation): void
    {
        /** @var Deferred<null> $deferred */
        $deferred = new Deferred();
        $id = $this->connections->wait($origin, static function () use ($deferred): bool {
            $deferred->complete();

            return true;
        });
        try {
            $deferred->getFuture()->await($cancellation);
        } finally {
            $this->connections->stopWaiting($origin, $id);
            if ($deferred->isComplete() && $cancellation->isRequested()) {
                $this->connections->wakeOne($origin); // we were woken but give up: pass the turn on
            }
        }
    }

    private function cancelTimer(Connection $connection): void
    {
        if ($connection->idleTimer !== null) {
            Loop::cancel($connection->idleTimer);
            $connection->idleTimer = null;
        }
    }
}
