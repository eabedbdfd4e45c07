<?php

declare(strict_types=1);

namespace Kiln\Db\Internal;

/**
 * Where a connection is in its life. Ready → Busy → Ready is one call; Busy → Broken when the call ended
 * half-way (lost socket, cancellation); any state → Closed.
 *
 * @internal
 */
enum LinkState
{
    case Ready;
    case Busy;
    case Broken;
    case Closed;

    /**
     * The state a call starts in (Busy).
     *
     * @throws \Error when the connection is running another call, broken or closed: a misuse of the connection
     */
    public function enter(): self
    {
        if ($this !== self::Ready) {
            throw new \Error($this === self::Busy
                ? 'This connection is running another statement: a connection runs one at a time (use the Pool)'
                : 'This connection is broken or closed; take another from the Pool');
        }
        return self::Busy;
    }

    /** The state a call that ended whole leaves (Ready, unless the connection broke or closed meanwhile). */
    public function leave(): self
    {
        return $this === self::Busy ? self::Ready : $this;
    }
}
