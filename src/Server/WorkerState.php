<?php

declare(strict_types=1);

namespace Kiln\Server;

/** A worker's life, as the worker lives it and as the supervisor tracks it. */
enum WorkerState: string
{
    case Booting = 'booting';
    case Ready = 'ready';
    case Draining = 'draining';
    case Stopping = 'stopping';
    case Exited = 'exited';

    public function canBecome(self $next): bool
    {
        return match ($this) {
            self::Booting => $next !== self::Booting,
            self::Ready => \in_array($next, [self::Draining, self::Stopping, self::Exited], true),
            self::Draining => \in_array($next, [self::Stopping, self::Exited], true),
            self::Stopping => $next === self::Exited,
            self::Exited => false,
        };
    }

    public function to(self $next): self
    {
        if (!$this->canBecome($next)) {
            throw new \LogicException("Illegal worker state transition {$this->value} -> {$next->value}");
        }
        return $next;
    }
}
