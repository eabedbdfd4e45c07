<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

use Kiln\Http\Limits;
use Kiln\Http\Realtime\Hub;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\WebSocket\Internal\Handover;
use Kiln\Http\WebSocket\Internal\Session;
use Kiln\Http\WebSocket\Internal\Sessions;
use Kiln\Http\WriteBatch;
use Kiln\Server\WorkerContext;

/**
 * The WebSocket side of a worker's HTTP server: turns a handshake request into a 101 response whose socket
 * becomes a Connection, and keeps the worker's connections (timeouts, drain, stop). One per worker, shared
 * by the HttpServer (drain and stop) and the App's `ws()` routes.
 */
final class WebSocketServer
{
    private readonly Sessions $sessions;

    private readonly WebSocketLimits $protocolLimits;

    private int $next = 0;

    private readonly string $idPrefix;

    /** @var (\Closure(): Hub)|null */
    private ?\Closure $hub = null;

    public function __construct(
        private readonly Limits $limits = new Limits(),
        private readonly WebSocketConfig $config = new WebSocketConfig(),
    ) {
        $this->sessions = new Sessions($limits);
        $this->protocolLimits = new WebSocketLimits(maxMessageBytes: $limits->wsMessageBytes);
        $this->idPrefix = getmypid() . '-';
    }

    /**
     * @internal called by HttpServer::start(): the connections' frames leave with $batch, and the connections
     *           are long-lived connections of the server's core, registered through $addLongLived: a drain
     *           waits for them (they keep working until shortly before the drain deadline, then get close
     *           1001), a stop closes them
     * @param \Closure(\Closure(bool): void): (\Closure(): void) $addLongLived HttpCore::addLongLived()
     */
    public function start(WorkerContext $context, WriteBatch $batch, \Closure $addLongLived): void
    {
        $this->sessions->start($context, $batch, $addLongLived);
    }

    /**
     * Where Connection::join() finds the worker's rooms (the App's hub(), made on first use).
     *
     * @param \Closure(): Hub $hub
     */
    public function useHub(\Closure $hub): void
    {
        $this->hub = $hub;
    }

    /**
     * Answers a WebSocket handshake: checks it (version, key, origin), picks a subprotocol from $subprotocols
     * (the server's preference order) and the extensions, runs $handler->onOpen(), and returns the 101 response
     * that hands the socket to the new connection once sent.
     *
     * @param list<string> $subprotocols
     * @throws HandshakeRefused when the request is no acceptable handshake: 426 with `Upgrade: websocket` for a
     *         plain HTTP request, 426 with Sec-WebSocket-Version for another version, 400 for a bad key or
     *         another malformed handshake, 403 for an origin not allowed
     * @throws \Throwable whatever onOpen() throws to refuse the connection (nothing was sent)
     */
    public function upgrade(Request $request, WebSocketHandler $handler, array $subprotocols = []): Response
    {
        if (!str_contains(strtolower($request->header('upgrade') ?? ''), 'websocket')) {
            // A plain HTTP request (a browser tab, a health check): say what this resource speaks.
            throw new HandshakeRefused(426, 'This resource is a WebSocket endpoint', ['Upgrade' => 'websocket']);
        }
        $outcome = Handshake::negotiate($request, new HandshakeOptions(
            $this->config->origins,
            $subprotocols,
            $this->config->deflate ? new DeflateOptions() : null,
        ));
        if (!$outcome->accepted) {
            throw new HandshakeRefused($outcome->status, $outcome->reason, $outcome->headers);
        }
        $protocol = new Protocol($this->protocolLimits, $outcome->deflate);
        $connection = new Connection($this->idPrefix . ++$this->next, $request, $protocol, $outcome->subprotocol, $this->hub);
        $session = new Session($this->sessions, $protocol, $handler, $this->limits, $connection);
        $connection->bind($session);
        $this->sessions->add($session);
        try {
            $handler->onOpen($connection, $request);
        } catch (\Throwable $refusal) {
            $session->abandon();
            throw $refusal;
        }
        $connection->opened();
        $session->opened();
        $response = new Response(101, $outcome->headers);
        $response->setUpgrade((new Handover($session))->take(...));
        return $response;
    }

    /** Open WebSocket connections of this worker (handshakes under way included). */
    public function count(): int
    {
        return $this->sessions->count();
    }
}
