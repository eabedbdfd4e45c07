<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

/**
 * The life of a worker's HTTP core (HttpCore). It only moves forward:
 *
 *     Serving ──► WindingDown ──► Draining ──► Stopped
 *        │              │             │            ▲
 *        └──────────────┴─────────────┴─► Finishing┘
 *
 * Serving may also go straight to Draining (a stop or a reload), and every state but Stopped to Stopped (stop()).
 *
 * @internal
 */
enum CoreState: string
{
    /** Connections are accepted and every request read is served. */
    case Serving = 'serving';
    /**
     * Still serving, but the worker is to be replaced (--max-requests, --max-memory): every response says
     * `Connection: close` and its connection closes after it, so that the drain that follows finds no
     * connection a client was about to send its next request on.
     */
    case WindingDown = 'winding-down';
    /** A graceful stop: the requests clients already sent are served, idle connections close, nothing is accepted. */
    case Draining = 'draining';
    /**
     * The worker process is ending (exit(), a fatal error: FatalGuard): the responses under way are finished,
     * each connection closes once its response is out, no request is started.
     */
    case Finishing = 'finishing';
    /** Nothing is left, or everything was closed: the core serves nothing more. */
    case Stopped = 'stopped';

    public function canBecome(self $next): bool
    {
        return match ($this) {
            self::Serving => $next !== self::Serving,
            self::WindingDown => $next !== self::Serving && $next !== self::WindingDown,
            self::Draining => $next === self::Finishing || $next === self::Stopped,
            self::Finishing => $next === self::Stopped,
            self::Stopped => false,
        };
    }

    /** @throws \Error on a transition the lifecycle does not allow */
    public function to(self $next): self
    {
        if (!$this->canBecome($next)) {
            $why = $this === self::Stopped ? 'it is stopped for good (start a new server)' : 'its life only moves forward';
            throw new \Error("The HTTP core cannot go from {$this->value} to {$next->value}: $why");
        }
        return $next;
    }

    /** Connections are accepted and their requests served (Serving or WindingDown). */
    public function serves(): bool
    {
        return $this === self::Serving || $this === self::WindingDown;
    }
}
