<?php

declare(strict_types=1);

namespace Kiln\Server;

/** A sidecar process's life, as the supervisor tracks it. */
enum SidecarState: string
{
    /** Forked; its socket does not accept connections yet. */
    case Starting = 'starting';
    /** Its socket accepts connections; its worker was told. */
    case Up = 'up';
    /** Signalled to end (replaced, its worker gone, or the server stopping); SIGKILL when it lingers. */
    case Stopping = 'stopping';
    /** Reaped. */
    case Exited = 'exited';

    public function canBecome(self $next): bool
    {
        return match ($this) {
            self::Starting => $next !== self::Starting,
            self::Up => $next === self::Stopping || $next === self::Exited,
            self::Stopping => $next === self::Exited,
            self::Exited => false,
        };
    }

    public function to(self $next): self
    {
        if (!$this->canBecome($next)) {
            throw new \LogicException("Illegal sidecar state transition {$this->value} -> {$next->value}");
        }
        return $next;
    }
}
