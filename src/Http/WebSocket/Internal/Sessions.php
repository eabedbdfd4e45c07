<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket\Internal;

use Kiln\Http\Limits;
use Kiln\Loop\Loop;
use Kiln\Server\WorkerContext;
use Kiln\Server\WorkerLog;

/**
 * The open WebSocket connections of a worker: one housekeeping timer for all of them (pings, idle and close
 * timeouts, handshakes never completed), and the drain: connections keep working until shortly before the
 * drain deadline, then get close 1001, and the drain is told when the last one is gone.
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

    /** @var (\Closure(): void)|null while draining: called each time the last connection is gone */
    private ?\Closure $onEmpty = null;

    private readonly \Closure $housekeeping;

    public function __construct(private readonly Limits $limits)
    {
        $this->housekeeping = $this->housekeep(...);
    }

    public function start(WorkerContext $context): void
    {
        $this->context = $context;
        $context->count('websocket', \count($this->sessions));
    }

    public function add(Session $session): void
    {
        $this->sessions[spl_object_id($session)] = $session;
        $this->context?->count('websocket', \count($this->sessions));
        if ($this->tick === null) {
            $interval = max(0.05, min(1.0, $this->limits->wsIdleTimeout / 4, $this->limits->wsCloseTimeout / 4));
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
        if ($this->draining && $this->onEmpty !== null) {
            ($this->onEmpty)();
        }
    }

    public function count(): int
    {
        return \count($this->sessions);
    }

    /**
     * Connections keep working for $closeIn seconds, then get close 1001 and $answerWithin seconds to answer
     * it before they are cut. $onEmpty is called whenever no connection is left, now included.
     *
     * @param \Closure(): void $onEmpty
     */
    public function drain(float $closeIn, float $answerWithin, \Closure $onEmpty): void
    {
        $this->draining = true;
        $this->onEmpty = $onEmpty;
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
            $onEmpty();
        }
    }

    /** Every connection gets a close 1001 if it can leave at once, and is closed. */
    public function stop(): void
    {
        $this->onEmpty = null;
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
        // A handshake whose 101 never left (the client went away, a middleware answered otherwise).
        $pendingTimeout = $this->limits->writeTimeout + $this->limits->wsCloseTimeout;
        foreach ($this->sessions as $session) {
            $session->tick($now, $pendingTimeout);
        }
    }
}
