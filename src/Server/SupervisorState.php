<?php

declare(strict_types=1);

namespace Kiln\Server;

/** The supervisor's life: Starting until the first generation is ready, then Running until a stop. */
enum SupervisorState: string
{
    case Starting = 'starting';
    case Running = 'running';
    /** QUIT: workers drain, then the supervisor exits. */
    case Draining = 'draining';
    /** TERM/INT, or a failed start: workers are told to stop now. */
    case Stopping = 'stopping';
    case Stopped = 'stopped';

    public function canBecome(self $next): bool
    {
        return match ($this) {
            self::Starting => \in_array($next, [self::Running, self::Stopping, self::Draining], true),
            self::Running => \in_array($next, [self::Draining, self::Stopping], true),
            self::Draining => \in_array($next, [self::Stopping, self::Stopped], true),
            self::Stopping => $next === self::Stopped,
            self::Stopped => false,
        };
    }

    public function to(self $next): self
    {
        if (!$this->canBecome($next)) {
            throw new \LogicException("Illegal supervisor state transition {$this->value} -> {$next->value}");
        }
        return $next;
    }
}
