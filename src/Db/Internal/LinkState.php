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
}
