<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

use Kiln\Http\Request;

/**
 * What a WebSocket route runs. Each method runs in a pooled Fiber and may suspend (await I/O, delay()).
 *
 * Contract:
 * - onOpen() runs before the upgrade, in the request's own Fiber, after the middleware: it sees the request
 *   (cookies, headers, route parameters in the `route_params` attribute) and MAY refuse the connection by
 *   throwing (an App's HttpErrorException gives its status; anything else a 500). Messages it sends leave right after
 *   the 101 response.
 * - onMessage() is called once per message, in the order the client sent them; the next message of the same
 *   connection waits until it returns (messages of other connections do not).
 * - onClose() is called exactly once for a connection that was opened, after its last onMessage(): with the
 *   code and reason of the client's close frame, the code the server closed with (1001 on shutdown, 1008 for a
 *   slow consumer, 1009 for a message too large, ...), or 1006 when the connection dropped without one.
 * - An exception from onMessage() is logged and closes the connection with 1011; one from onClose() is logged.
 */
interface WebSocketHandler
{
    public function onOpen(Connection $connection, Request $request): void;

    public function onMessage(Connection $connection, Message $message): void;

    public function onClose(Connection $connection, int $code, string $reason): void;
}
