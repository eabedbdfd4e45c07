<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

use Kiln\Loop\Cancellation;
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
    /** @var array<string, list<Connection>> */
    private array $idle = [];
    /** @var array<string, int> */
    private array $open = [];
    /** @var array<int, true> spl_object_id of every connection counted in $open and not idle */
    private array $busy = [];
    /** @var array<string, array<int, \Closure(): bool>> */
    private array $waiting = [];
    private int $nextWaiter = 0;
    private int $opened = 0;
    private ?string $sweeper = null;

    public function __construct(
        private readonly int $max,
        private readonly float $idleTimeout,
        private readonly bool $checkIdle = true,
    ) {}

    /**
     * The most recently used idle connection to $key, if there is one and it needs no check: the hot path
     * of acquire(), without its closure.
     */
    public function reuse(string $key): ?Connection
    {
        if ($this->checkIdle || !isset($this->idle[$key]) || $this->idle[$key] === []) {
            return null;
        }

        return $this->takeIdle($key, last: true);
    }

    /**
     * @param \Closure(): Connection $connect opens a new connection
     * @param bool $fresh never reuse an idle connection (a retry)
     */
    public function acquire(string $key, \Closure $connect, Deadline $deadline, ?Cancellation $cancellation, bool $fresh = false): Connection
    {
        while (true) {
            while (!$fresh && ($this->idle[$key] ?? []) !== []) {
                $connection = $this->takeIdle($key, last: true);
                if (!$this->checkIdle || $connection->isUsable()) {
                    return $connection;
                }
                $this->discard($connection); // closed by the responder while idle: open another
            }
            if (($this->open[$key] ?? 0) < $this->max) {
                $this->open[$key] = ($this->open[$key] ?? 0) + 1;
                try {
                    $connection = $connect();
                } catch (\Throwable $e) {
                    $this->open[$key]--;
                    $this->wakeOne($key);
                    throw $e;
                }
                $this->opened++;
                $this->busy[\spl_object_id($connection)] = true;

                return $connection;
            }
            if ($fresh && ($this->idle[$key] ?? []) !== []) {
                $this->discard($this->takeIdle($key, last: false)); // make room for the fresh connection
                continue;
            }
            $id = $this->nextWaiter++;
            $woken = Await::event(
                function (\Closure $wake) use ($key, $id): int {
                    $this->waiting[$key][$id] = $wake;

                    return $id;
                },
                function (int $id) use ($key): void {
                    unset($this->waiting[$key][$id]);
                },
                $deadline->next(),
                $cancellation,
            );
            if (!$woken) {
                throw $deadline->timeout("all {$this->max} connections stayed busy");
            }
        }
    }

    public function release(Connection $connection): void
    {
        if (!$this->unbusy($connection)) {
            return;
        }
        $key = $connection->key;
        $connection->idleSince = Loop::now();
        $this->idle[$key][] = $connection;
        if ($this->sweeper === null) {
            $this->sweeper = Loop::repeat($this->idleTimeout / 2, fn() => $this->sweep());
            Loop::unreference($this->sweeper);
        }
        $this->wakeOne($key);
    }

    public function discard(Connection $connection): void
    {
        $connection->close();
        if ($this->unbusy($connection)) {
            $key = $connection->key;
            $this->open[$key]--;
            $this->wakeOne($key);
            if ($this->open[$key] === 0 && ($this->idle[$key] ?? []) === [] && ($this->waiting[$key] ?? []) === []) {
                unset($this->open[$key], $this->idle[$key], $this->waiting[$key]); // e.g. a replaced php-cgi child's socket
            }
        }
    }

    /** Closes every idle connection, or those to $key (busy ones close or come back when their requests end). */
    public function closeIdle(?string $key = null): void
    {
        foreach ($key === null ? \array_keys($this->idle) : [$key] as $key) {
            while (($this->idle[$key] ?? []) !== []) {
                $this->discard($this->takeIdle($key, last: false));
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
        foreach (\array_keys($this->idle) as $key) {
            while (isset($this->idle[$key][0]) && $this->idle[$key][0]->idleSince < $limit) {
                $this->discard($this->takeIdle($key, last: false));
            }
        }
    }

    /** Connections open now to $key, busy or idle. */
    public function openCount(string $key): int
    {
        return $this->open[$key] ?? 0;
    }

    public function idleCount(string $key): int
    {
        return \count($this->idle[$key] ?? []);
    }

    /** Connections opened since this pool was made, to every address. */
    public function openedCount(): int
    {
        return $this->opened;
    }

    private function takeIdle(string $key, bool $last): Connection
    {
        $connection = $last ? \array_pop($this->idle[$key]) : \array_shift($this->idle[$key]);
        \assert($connection instanceof Connection);
        $this->busy[\spl_object_id($connection)] = true;

        return $connection;
    }

    private function wakeOne(string $key): void
    {
        foreach ($this->waiting[$key] ?? [] as $id => $wake) {
            unset($this->waiting[$key][$id]);
            if ($wake()) {
                return;
            }
        }
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
}
