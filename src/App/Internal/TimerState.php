<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

/** @internal the life of a Timer */
enum TimerState
{
    /** Registered; the worker has not started it yet. */
    case Waiting;
    /** On the loop. */
    case Armed;
    /** A one-shot timer that fired, or a timer its worker stopped. */
    case Done;
    case Cancelled;

    public function to(self $next): self
    {
        $allowed = match ($this) {
            self::Waiting => [self::Armed, self::Cancelled, self::Done],
            self::Armed => [self::Done, self::Cancelled],
            self::Done, self::Cancelled => [],
        };
        return \in_array($next, $allowed, true) ? $next
            : throw new \Error("A timer cannot go from {$this->name} to {$next->name}");
    }
}
