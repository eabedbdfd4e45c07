<?php

declare(strict_types=1);

namespace Kiln\Http\Sse;

use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\Sse\Internal\Sink;
use Kiln\Http\Sse\Internal\StreamState;
use Kiln\Loop\Loop;

/**
 * One client's event stream. A handler makes it, returns response() (the `text/event-stream` head), and
 * sends events whenever it likes, from any later callback: the stream holds no Fiber while it waits, only
 * the connection's buffers and watcher. Events sent before the head is out are kept and sent right after it.
 *
 * - send()/comment() return false once the stream has ended; they never block. A client that reads too
 *   slowly (more than the write buffer limit queued) is disconnected, and may reconnect with Last-Event-ID.
 * - onStart() callbacks run once the head is out (never, if the response is replaced or the request is
 *   HEAD); onClose() callbacks run exactly once when the stream ends for any reason: the client left,
 *   close(), the worker draining or stopping. Both run from the loop, never inside send().
 * - The server sends a heartbeat comment on a stream quiet for Limits::$sseHeartbeat seconds.
 */
final class EventStream
{
    private StreamState $state = StreamState::Waiting;

    /** What was sent before the head went out. */
    private string $early = '';

    private ?Sink $sink = null;

    /** @var list<\Closure(self): void> */
    private array $onStart = [];

    /** @var list<\Closure(self): void> */
    private array $onClose = [];

    public function __construct(private readonly ?string $lastEventId = null) {}

    /** A stream for this request, remembering the client's `Last-Event-ID`. */
    public static function for(Request $request): self
    {
        $id = $request->header('last-event-id');
        return new self($id === null || $id === '' ? null : $id);
    }

    /** The id of the last event the client saw before it reconnected, if it says. */
    public function lastEventId(): ?string
    {
        return $this->lastEventId;
    }

    /** The response that opens this stream: 200, `text/event-stream`, not cached, not buffered by proxies. */
    public function response(): Response
    {
        return new Response(200, [
            'Content-Type' => 'text/event-stream; charset=utf-8',
            'Cache-Control' => 'no-cache',
            'X-Accel-Buffering' => 'no',
        ], $this);
    }

    /** Sends one event (see EventEncoder::event() for what is refused). False once the stream has ended. */
    public function send(string $data, ?string $event = null, ?string $id = null, ?int $retry = null): bool
    {
        return $this->write(EventEncoder::event($data, $event, $id, $retry));
    }

    /** Sends a comment line, which clients ignore. */
    public function comment(string $text): bool
    {
        return $this->write(EventEncoder::comment($text));
    }

    /** Sends bytes already in event-stream form (EventEncoder's output). False once the stream has ended. */
    public function write(string $bytes): bool
    {
        if ($this->state === StreamState::Waiting) {
            $this->early .= $bytes;
            return true;
        }
        return $this->state === StreamState::Open && $this->sink !== null && $this->sink->write($bytes);
    }

    /** Ends the stream (the response ends; the connection may serve another request). */
    public function close(): void
    {
        if ($this->state === StreamState::Open && $this->sink !== null) {
            $this->sink->end();
            return;
        }
        $this->ended();
    }

    public function isOpen(): bool
    {
        return $this->state !== StreamState::Closed;
    }

    /** Whether the head is out and the stream is still open. */
    public function isStarted(): bool
    {
        return $this->state === StreamState::Open;
    }

    /** @param \Closure(self): void $callback run once the head is out (at once if it is already) */
    public function onStart(\Closure $callback): void
    {
        match ($this->state) {
            StreamState::Waiting => $this->onStart[] = $callback,
            StreamState::Open => $callback($this),
            StreamState::Closed => null,
        };
    }

    /** @param \Closure(self): void $callback run once when the stream ends (at once if it has) */
    public function onClose(\Closure $callback): void
    {
        if ($this->state === StreamState::Closed) {
            $callback($this);
            return;
        }
        $this->onClose[] = $callback;
    }

    /**
     * The head is out: what was sent early follows it, then the onStart() callbacks run.
     *
     * @internal called by the server
     */
    public function attach(Sink $sink): void
    {
        if ($this->state !== StreamState::Waiting) {
            throw new \Error('An EventStream is the body of one response only');
        }
        $this->state = StreamState::Open;
        $this->sink = $sink;
        if ($this->early !== '') {
            [$early, $this->early] = [$this->early, ''];
            $sink->write($early);
        }
        [$callbacks, $this->onStart] = [$this->onStart, []];
        foreach ($callbacks as $callback) {
            if ($this->state === StreamState::Open) {
                $callback($this);
            }
        }
    }

    /**
     * The stream ended (its response, or its connection): runs the onClose() callbacks, once.
     *
     * @internal called by the server
     */
    public function ended(): void
    {
        if ($this->state === StreamState::Closed) {
            return;
        }
        $this->state = StreamState::Closed;
        $this->sink = null;
        $this->early = '';
        $this->onStart = [];
        [$callbacks, $this->onClose] = [$this->onClose, []];
        foreach ($callbacks as $callback) {
            try {
                $callback($this);
            } catch (\Throwable $e) {
                Loop::reportError($e); // the other callbacks (a hub's clean-up) still run
            }
        }
    }
}
