<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

use Kiln\Http\Realtime\Hub;
use Kiln\Http\Realtime\Member;
use Kiln\Http\Request;
use Kiln\Http\WebSocket\Internal\Session;

/**
 * One WebSocket connection, as a handler sees it. Sending never blocks: frames are queued and written as
 * the client reads; a client that lets more than Limits::$wsWriteBuffer bytes pile up is closed with 1008.
 * Every method may be called from any Fiber, also after the connection closed (sends then return false).
 */
final class Connection implements Member
{
    private ?Session $session = null;

    /** The rooms' hub, once this connection joined one. */
    private ?Hub $hub = null;

    /** @var array<string, mixed> */
    private array $attributes = [];

    /** The handshake request, until onOpen() returned (see request()). */
    private ?Request $request;

    private readonly string $remoteAddress;

    /**
     * @internal made by WebSocketServer::upgrade()
     * @param (\Closure(): Hub)|null $hubs where join() finds the worker's rooms
     */
    public function __construct(
        private readonly string $id,
        Request $request,
        private readonly Protocol $protocol,
        private readonly ?string $subprotocol,
        private readonly ?\Closure $hubs = null,
    ) {
        $this->request = $request;
        $this->remoteAddress = $request->clientIp();
    }

    /** @internal */
    public function bind(Session $session): void
    {
        $this->session = $session;
    }

    /** Unique among the connections of this node while it is open: `<worker pid>-<number>`. */
    public function id(): string
    {
        return $this->id;
    }

    /**
     * The handshake request (headers, cookies, query, attributes set by middleware, `route_params`), while
     * onOpen() runs. It is let go when onOpen() returns: it is about 3 KiB, more than the rest of an idle
     * connection, so keep what the connection needs later with setAttribute().
     */
    public function request(): Request
    {
        return $this->request ?? throw new \Error(
            'The handshake request is only kept while onOpen() runs: store what you need later with setAttribute()',
        );
    }

    /** @internal onOpen() returned: the handshake request is let go. */
    public function opened(): void
    {
        $this->request = null;
    }

    /** The client's address (the forwarded one behind a trusted proxy). */
    public function remoteAddress(): string
    {
        return $this->remoteAddress;
    }

    /** The subprotocol both sides agreed on in the handshake, if any. */
    public function subprotocol(): ?string
    {
        return $this->subprotocol;
    }

    /** Whether messages can still be sent (the close handshake has not begun). */
    public function isOpen(): bool
    {
        return $this->session?->isOpen() ?? false;
    }

    /**
     * Sends a text message. False when it was not queued: the connection is closing or closed, or was just
     * closed with 1008 because the client reads too slowly.
     *
     * @throws \ValueError when $text is not valid UTF-8 (send it with sendBinary())
     */
    public function send(string $text): bool
    {
        if (preg_match('//u', $text) !== 1) {
            throw new \ValueError('A WebSocket text message must be valid UTF-8; use sendBinary() for other bytes');
        }
        return $this->session?->send($this->protocol->encodeMessage($text, false)) ?? false;
    }

    public function sendBinary(string $data): bool
    {
        return $this->session?->send($this->protocol->encodeMessage($data, true)) ?? false;
    }

    /** @param string $payload at most 125 bytes */
    public function ping(string $payload = ''): bool
    {
        if (\strlen($payload) > 125) {
            throw new \ValueError('A ping payload is at most 125 bytes, got ' . \strlen($payload));
        }
        return $this->session?->send($this->protocol->encodePing($payload)) ?? false;
    }

    /**
     * Starts the close handshake: the client gets a close frame and Limits::$wsCloseTimeout seconds to answer
     * it, then the connection is cut. onClose() is called with this code and reason. Closing twice does nothing.
     *
     * @param int $code 1000-1003, 1007-1014 or 3000-4999
     * @param string $reason at most 123 bytes of UTF-8
     */
    public function close(int $code = 1000, string $reason = ''): void
    {
        $known = ($code >= 1000 && $code <= 1003) || ($code >= 1007 && $code <= 1014) || ($code >= 3000 && $code <= 4999);
        if (!$known) {
            throw new \ValueError("$code is not a close code an endpoint may send (1000-1003, 1007-1014, 3000-4999)");
        }
        if (\strlen($reason) > 123 || preg_match('//u', $reason) !== 1) {
            throw new \ValueError('A close reason is at most 123 bytes of UTF-8');
        }
        $this->session?->close($code, $reason);
    }

    public function attribute(string $name, mixed $default = null): mixed
    {
        return \array_key_exists($name, $this->attributes) ? $this->attributes[$name] : $default;
    }

    public function setAttribute(string $name, mixed $value): void
    {
        $this->attributes[$name] = $value;
    }

    /**
     * Puts this connection in a room: what is broadcast to the room (`$app->broadcast()`, Hub::broadcast()) from
     * any worker of the node reaches it, as a text message (binary when it is not UTF-8). It leaves every room
     * when it closes.
     */
    public function join(string $room): void
    {
        if (!$this->isOpen()) {
            return;
        }
        if ($this->hub === null) {
            $hubs = $this->hubs ?? throw new \Error('Rooms need the App: a connection made outside $app->ws() has none');
            $this->hub = $hubs();
        }
        $this->hub->join($room, $this);
    }

    public function leave(string $room): void
    {
        $this->hub?->leave($room, $this);
    }

    /** @return list<string> the rooms this connection is in */
    public function rooms(): array
    {
        return $this->hub?->roomsOf($this) ?? [];
    }

    /** Member: the connection's id(). */
    public function memberId(): string
    {
        return $this->id;
    }

    /** Member: a room's message, as text (binary when it is not UTF-8); dropped once the connection closes. */
    public function deliver(string $payload): void
    {
        if (preg_match('//u', $payload) === 1) {
            $this->session?->send($this->protocol->encodeMessage($payload, false));
        } else {
            $this->session?->send($this->protocol->encodeMessage($payload, true));
        }
    }

    /** @internal called when the connection is gone */
    public function leaveRooms(): void
    {
        $this->hub?->leaveAll($this);
    }
}
