<?php

declare(strict_types=1);

namespace Kiln\Http\Sse\Internal;

/**
 * Where an EventStream is in its life: made by a handler (its response head not sent yet), open on a
 * connection, or ended (by the server, the handler, or the client going away).
 *
 * @internal
 */
enum StreamState
{
    case Waiting;
    case Open;
    case Closed;
}
