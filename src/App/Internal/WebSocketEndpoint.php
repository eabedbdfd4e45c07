<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\HttpErrorException;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\WebSocket\HandshakeRefused;
use Kiln\Http\WebSocket\WebSocketHandler;
use Kiln\Http\WebSocket\WebSocketServer;

/**
 * The handler of a `ws()` route: runs after the middleware like any route's, and answers with the 101 that
 * hands the socket to a WebSocket connection, or with the handshake's refusal as an HTTP error (so error
 * pages and middleware see it as any other).
 *
 * @internal
 */
final class WebSocketEndpoint
{
    /**
     * @param list<string> $subprotocols
     * @param \Closure(): WebSocketServer $server the worker's (known once the worker configured the App)
     */
    public function __construct(
        private readonly WebSocketHandler $handler,
        private readonly array $subprotocols,
        private readonly \Closure $server,
    ) {}

    public function handle(Request $request): Response
    {
        try {
            return ($this->server)()->upgrade($request, $this->handler, $this->subprotocols);
        } catch (HandshakeRefused $refused) {
            throw new HttpErrorException($refused->status, $refused->getMessage(), $refused->headers, $refused);
        }
    }
}
