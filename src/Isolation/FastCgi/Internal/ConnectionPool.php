<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

use Kiln\Loop\Cancellation;
use Kiln\Loop\KeyedPool;
use Kiln\Loop\Loop;

/**
 * Kept connections per responder address, at most $max open per address.
 *
 * - acquire() hands out the most recently used idle connection that still looks usable (or, without
 *   $checkIdle, the most recently used one), else opens one,
 *   else waits (at most one read timeout) for a release() or discard() of that address.
 * - Every acquired connection MUST end in exactly one release() (END_REQUEST read, nothing else buffered)
 *   or discard() (anything else); a second call is ignored.
 * - Idle connections are closed after $idleTimeout seconds (give or take half of it), by one sweep timer
 *   per pool that does not keep the loop alive; close() stops it. An address with nothing open is forgotten.
 *
 * @internal
 */
final class ConnectionPool
{
    /** @var KeyedPool<Connection> */
    private readonly KeyedPool $connections;
    private ?string $sweeper = null;

    public function __construct(
        int $max,
        private readonly float $idleTimeout,
        private readonly bool $checkIdle = true,
    ) {
        $this->connections = new KeyedPool($max);
    }

    /**
     * The most recently used idle connection to $key, if there is one and it needs no check: the hot path
     * of acquire(), without its closure.
     */
    public function reuse(string $key): ?Connection
    {
        return $this->checkIdle ? null : $this->connections->takeIdle($key);
    }

    /**
     * @param \Closure(): Connection $connect opens a new connection
     * @param bool $fresh never reuse an idle connection (a retry)
     */
    public function acquire(string $key, \Closure $connect, Deadline $deadline, ?Cancellation $cancellation, bool $fresh = false): Connection
    {
        while (true) {
            while (!$fresh && ($connection = $this->connections->takeIdle($key)) !== null) {
                if (!$this->checkIdle || $connection->isUsable()) {
                    return $connection;
                }
                $this->discard($connection); // closed by the responder while idle: open another
            }
            $connection = $this->connections->open($key, $connect);
            if ($connection !== null) {
                return $connection;
            }
            if ($fresh && ($oldest = $this->connections->takeIdle($key, newest: false)) !== null) {
                $this->discard($oldest); // make room for the fresh connection
                continue;
            }
            $woken = Await::event(
                fn(\Closure $wake): int => $this->connections->wait($key, $wake),
                fn(int $id) => $this->connections->stopWaiting($key, $id),
                $deadline->next(),
                $cancellation,
            );
            if (!$woken) {
                throw $deadline->timeout("all {$this->connections->max} connections stayed busy");
            }
        }
    }

    public function release(Connection $connection): void
    {
        $connection->busy = false;
        $key = $connection->key;
        if (!$this->connections->putBack($key, $connection)) {
            return;
        }
        $connection->idleSince = Loop::now();
        if ($this->sweeper === null) {
            $this->sweeper = Loop::repeat($this->idleTimeout / 2, fn() => $this->sweep());
            Loop::unreference($this->sweeper);
        }
        $this->connections->wakeOne($key);
    }

    public function discard(Connection $connection): void
    {
        $connection->busy = false;
        $connection->close();
        if ($this->connections->remove($connection->key, $connection)) {
            $this->connections->wakeOne($connection->key);
        }
    }

    /** Closes every idle connection, or those to $key (busy ones close or come back when their requests end). */
    public function closeIdle(?string $key = null): void
    {
        foreach ($key === null ? $this->connections->keys() : [$key] as $key) {
            while (($connection = $this->connections->takeIdle($key, newest: false)) !== null) {
                $this->discard($connection);
            }
        }
    }

    /** closeIdle(), and the sweep timer goes: for a pool that is no longer used. */
    public function close(): void
    {
        $this->closeIdle();
        if ($this->sweeper !== null) {
            Loop::cancel($this->sweeper);
            $this->sweeper = null;
        }
    }

    /** Closes the connections idle for longer than $idleTimeout (the oldest are first in each list). */
    private function sweep(): void
    {
        $limit = Loop::now() - $this->idleTimeout;
        foreach ($this->connections->keys() as $key) {
            while (($connection = $this->connections->oldestIdle($key)) !== null && $connection->idleSince < $limit) {
                $this->connections->take($key, $connection);
                $this->discard($connection);
            }
        }
    }

    /** Connections open now to $key, busy or idle. */
    public function openCount(string $key): int
    {
        return $this->connections->openCount($key);
    }

    public function idleCount(string $key): int
    {
        return $this->connections->idleCount($key);
    }

    /** Connections opened since this pool was made, to every address. */
    public function openedCount(): int
    {
        return $this->connections->openedCount();
    }
}
