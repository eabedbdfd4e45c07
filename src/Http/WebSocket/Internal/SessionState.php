<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket\Internal;

/**
 * Where a WebSocket connection is in its life.
 *
 * @internal
 */
enum SessionState
{
    /** Handshake accepted, onOpen() running or the 101 on its way: the socket is not ours yet. */
    case Pending;
    /** Messages flow both ways. */
    case Open;
    /** The server sent its close frame and reads on until the client's arrives (or the close timeout). */
    case Closing;
    /** Nothing more is read: the last bytes (a close frame) are being written, then the socket closes. */
    case Ending;
    case Closed;
}
