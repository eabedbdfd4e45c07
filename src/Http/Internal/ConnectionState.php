<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

/** @internal */
enum ConnectionState
{
    /** Waiting for or reading a request (head or body). */
    case Reading;
    /** A request is with the handler or its response is being sent; later pipelined bytes wait. */
    case Responding;
    /** The last response is queued; the socket closes once it is flushed. */
    case Closing;
    /** The socket was handed to another protocol (WebSocket…); HTTP no longer owns it. */
    case Detached;
    case Closed;
}
