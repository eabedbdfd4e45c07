<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\Http\Limits;
use Kiln\Http\Realtime\Hub;
use Kiln\Http\Realtime\NumberingBus;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\WebSocketHandler;
use Kiln\Http\WebSocket\WebSocketServer;
use Kiln\Store\NodeBus;
use Kiln\Store\NodeState;

/**
 * @internal
 *
 * An App's real-time side (App::ws(), App::sse(), App::hub()): the worker's WebSocket server, the Hub of rooms and
 * topics joined to the node's bus, and the limits they take. Each is made when first needed, so an App used on its
 * own (a test, a script) works with the default limits, and a worker sets its own before the first request.
 */
final class Realtime
{
    private ?WebSocketServer $webSockets = null;

    private ?Limits $limits = null;

    private ?Hub $hub = null;

    /** The server's limits (SSE replay); events that scripts publish are numbered by this worker's Hub. */
    public function configure(Limits $limits): void
    {
        $this->limits = $limits;
        NodeBus::set(new NumberingBus(NodeBus::get(), $this->hub(...)));
    }

    /** The worker's WebSocket connections (so the server's drain and stop reach them); they join this Hub's rooms. */
    public function useServer(WebSocketServer $server): void
    {
        $this->webSockets = $server;
        $server->useHub($this->hub(...));
    }

    public function hub(): Hub
    {
        if ($this->hub === null) {
            $limits = $this->limits ?? new Limits();
            // In a worker the node's bus reaches the other workers; elsewhere it is the process's own.
            $this->hub = new Hub(NodeBus::get(), NodeState::eventState(), $limits->sseReplay, $limits->sseReplayKeep);
        }
        return $this->hub;
    }

    /**
     * The route handler of a WebSocket endpoint (App::ws()).
     *
     * @param WebSocketHandler|\Closure(Connection, Message): mixed $handler
     * @param (\Closure(Connection, \Kiln\Http\Request): mixed)|null $onOpen
     * @param (\Closure(Connection, int, string): mixed)|null $onClose
     * @param list<string> $subprotocols
     */
    public function webSocketEndpoint(string $path, WebSocketHandler|\Closure $handler, ?\Closure $onOpen, ?\Closure $onClose, array $subprotocols): \Closure
    {
        if ($handler instanceof WebSocketHandler && ($onOpen !== null || $onClose !== null)) {
            throw new \ValueError("ws($path): onOpen and onClose are for a closure handler; a WebSocketHandler has its own");
        }
        if ($handler instanceof \Closure) {
            $handler = new WebSocketCallbacks($handler, $onOpen, $onClose);
        }
        return (new WebSocketEndpoint($handler, $subprotocols, $this->server(...)))->handle(...);
    }

    /**
     * The route handler of a server-sent events endpoint (App::sse()).
     *
     * @param (\Closure(\Kiln\Http\Sse\EventStream, \Kiln\App\Context): mixed)|null $handler
     */
    public function sseEndpoint(string $path, ?\Closure $handler): \Closure
    {
        if ($handler === null && !str_contains($path, '{topic')) {
            throw new \ValueError("sse($path): without a handler the path needs a {topic} parameter");
        }
        return (new SseEndpoint($handler, $this->hub(...)))->handle(...);
    }

    private function server(): WebSocketServer
    {
        if ($this->webSockets === null) {
            $this->useServer(new WebSocketServer($this->limits ?? new Limits()));
        }
        \assert($this->webSockets !== null);
        return $this->webSockets;
    }
}
