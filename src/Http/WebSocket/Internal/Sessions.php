<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket\Internal;

use Kiln\Http\Limits;
use Kiln\Http\WriteBatch;
use Kiln\Loop\Loop;
use Kiln\Server\WorkerContext;
use Kiln\Server\WorkerLog;

/**
 * The open WebSocket connections of a worker: one housekeeping timer for all of them (pings, idle and close
 * timeouts, handshakes never completed), and the drain: connections keep working until shortly before the
 * drain deadline, then get close 1001, and the drain is told when the last one is gone.
 *
 * Towards the HTTP core they are one long-lived connection (HttpCore::addLongLived()), registered from the
 * start: the core tells it when it drains or stops, and a drain ends only once it is released, which it is
 * while draining whenever no connection is left. A connection opened after that (a request that was being
 * served when the drain began upgraded) registers it again, so the drain waits for that one too; its close
 * time stays the one the drain set.
 *
 * @internal
 */
final class Sessions
{
    /** @var array<int, Session> */
    private array $sessions = [];

    private ?WorkerContext $context = null;

    private ?string $tick = null;

    private bool $draining = false;

    /** While draining: when the connections are asked to close. */
    private float $closeAt = INF;

    /** While draining: how long a connection has to answer its close 1001. */
    private float $answerWithin = 0.0;

    private ?string $closeTimer = null;

    /** The batch the connections' frames leave with: the HTTP server's, once started. */
    private WriteBatch $batch;

    /** @var (\Closure(\Closure(bool): void): (\Closure(): void))|null registers with the HTTP core (addLongLived) */
    private ?\Closure $addLongLived = null;

    /** @var (\Closure(): void)|null while registered with the HTTP core: tells it this is closed */
    private ?\Closure $release = null;

    private readonly \Closure $housekeeping;

    public function __construct(private readonly Limits $limits)
    {
        $this->housekeeping = $this->housekeep(...);
        $this->batch = new WriteBatch($limits->responseHold);
    }

    /** @param \Closure(\Closure(bool): void): (\Closure(): void) $addLongLived HttpCore::addLongLived() */
    public function start(WorkerContext $context, WriteBatch $batch, \Closure $addLongLived): void
    {
        $this->context = $context;
        $this->batch = $batch;
        $this->addLongLived = $addLongLived;
        $this->register();
        $context->count('websocket', \count($this->sessions));
    }

    public function batch(): WriteBatch
    {
        return $this->batch;
    }

    public function add(Session $session): void
    {
        $this->sessions[spl_object_id($session)] = $session;
        $this->context?->count('websocket', \count($this->sessions));
        $this->register(); // a drain released it when the last connection went: it waits for this one too
        if ($this->tick === null) {
            $interval = max(0.05, min(1.0, $this->limits->wsIdleTimeout / 4, $this->limits->wsCloseTimeout / 4, $this->limits->writeTimeout / 4));
            $this->tick = Loop::repeat($interval, $this->housekeeping);
            Loop::unreference($this->tick);
        }
    }

    /** A connection took its socket over: one opened after the drain's close time is closed at once. */
    public function attached(Session $session): void
    {
        if ($this->draining && Loop::now() >= $this->closeAt) {
            $session->close(1001, 'server shutting down', $this->answerWithin);
        }
    }

    public function forget(Session $session): void
    {
        unset($this->sessions[spl_object_id($session)]);
        $this->context?->count('websocket', \count($this->sessions));
        $session->connection->leaveRooms();
        if ($this->sessions !== []) {
            return;
        }
        if ($this->tick !== null) {
            Loop::cancel($this->tick);
            $this->tick = null;
        }
        if ($this->draining) {
            $this->released();
        }
    }

    public function count(): int
    {
        return \count($this->sessions);
    }

    /** Registers with the HTTP core, unless registered already or started by none. */
    private function register(): void
    {
        if ($this->release === null && $this->addLongLived !== null) {
            $this->release = ($this->addLongLived)($this->closeAsked(...));
        }
    }

    /** Tells the HTTP core there is nothing left to wait for (until a connection is added again). */
    private function released(): void
    {
        $release = $this->release;
        $this->release = null;
        if ($release !== null) {
            $release();
        }
    }

    /** The HTTP core drains ($graceful) or stops. */
    private function closeAsked(bool $graceful): void
    {
        if (!$graceful) {
            $this->stop();
            return;
        }
        if ($this->draining) {
            return; // registered again during the drain: the close time stays
        }
        // The last second before the deadline (less for a short close timeout or drain) is for the close
        // handshake; an unanswered one is cut half-way through it, so nothing is left when the deadline comes.
        $timeout = $this->context?->drainTimeout() ?? 0.0;
        $handshake = min(1.0, $this->limits->wsCloseTimeout, $timeout / 2);
        $this->drain($timeout - $handshake, $handshake / 2);
    }

    /** Connections keep working for $closeIn seconds, then get close 1001 and $answerWithin seconds to answer it before they are cut. */
    private function drain(float $closeIn, float $answerWithin): void
    {
        $this->draining = true;
        $this->closeAt = Loop::now() + $closeIn;
        $this->answerWithin = $answerWithin;
        $this->closeTimer = Loop::delay(max(0.0, $closeIn), function (): void {
            $this->closeTimer = null;
            foreach ($this->sessions as $session) {
                $session->close(1001, 'server shutting down', $this->answerWithin);
            }
        });
        Loop::unreference($this->closeTimer);
        if ($this->sessions === []) {
            $this->released();
        }
    }

    /** Every connection gets a close 1001 if it can leave at once, and is closed. */
    private function stop(): void
    {
        $this->release = null; // the core forgets every long-lived connection as it stops
        if ($this->closeTimer !== null) {
            Loop::cancel($this->closeTimer);
            $this->closeTimer = null;
        }
        foreach ($this->sessions as $session) {
            $session->shutDown('server stopping');
        }
    }

    public function log(string $level, string $message): void
    {
        if ($this->context !== null) {
            $this->context->log($level, $message);
            return;
        }
        WorkerLog::write($level, $message);
    }

    private function housekeep(): void
    {
        $now = Loop::now();
        // A handshake whose 101 never left: a dropped 101 ends its connection at once (Handover), so this is
        // the bound for one something still holds.
        $pendingTimeout = $this->limits->writeTimeout + $this->limits->wsCloseTimeout;
        foreach ($this->sessions as $session) {
            $session->tick($now, $pendingTimeout);
        }
    }
}
