<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\Wire\BodyChunk;
use Kiln\Http\Wire\ParseException;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\RequestParser;
use Kiln\Http\WriteBatch;
use Kiln\Loop\Loop;

/**
 * One client connection: reads and parses requests, hands each to the server's handler in a pooled
 * Fiber, and sends responses in order. Pipelined requests wait in the parser until the response
 * before them is queued. Output is buffered only up to Limits::$writeBuffer before a streaming
 * producer is paused (backpressure).
 *
 * @internal
 */
final class Connection
{
    public ConnectionState $state = ConnectionState::Reading;

    /** When the first byte of the request now being received arrived (0: none pending). */
    public float $headStartedAt = 0.0;

    public float $lastActivityAt;

    /** When it was opened (accepted). */
    public readonly float $openedAt;

    public float $lastBodyAt = 0.0;

    /** When the head of the request whose body is being read was parsed. */
    public float $bodyStartedAt = 0.0;

    public int $served = 0;

    /** The client closed its side (or the read failed): what it sent is still answered, then the socket closes. */
    public bool $peerClosed = false;

    /** Bytes of the response to the request now dispatched were written (read by FatalGuard). */
    public bool $responseStarted = false;

    public readonly Output $output;

    private readonly RequestParser $parser;

    /** The core's write batch: given to each request, for a handler about to do something slow. */
    private readonly WriteBatch $batch;

    private readonly string $readId;

    private bool $reading = true;

    private ?RequestHead $head = null;

    private ?BodyBuffer $body = null;

    /** Runs $pending in a Fiber: made once per connection, dropped on release (it refers back to $this). */
    private ?\Closure $runner = null;

    private ?Request $pending = null;

    /** The event stream this connection's response is, while it is open. */
    private ?PushedStream $pushed = null;

    /** @param resource $socket */
    public function __construct(
        public readonly mixed $socket,
        public readonly int $id,
        private readonly HttpCore $core,
        private readonly Limits $limits,
        public readonly string $remoteAddress,
        public readonly int $remotePort,
        public readonly string $localAddress = '',
        public readonly int $localPort = 0,
    ) {
        $this->parser = new RequestParser($limits);
        $this->lastActivityAt = $this->openedAt = Loop::now();
        $this->batch = $core->writeBatch;
        $this->output = new Output($socket, $limits->writeBuffer, $this->batch, $this->onWritable(...));
        $this->readId = Loop::onReadableUnbuffered($socket, $this->onReadable(...));
    }

    public function isIdle(): bool
    {
        return $this->state === ConnectionState::Reading && $this->head === null && $this->output->pending() === 0
            && $this->parser->isIdle();
    }

    /** Waiting for a next request, with none of it read yet (what it last sent may still be on its way out). */
    public function awaitsRequest(): bool
    {
        return $this->state === ConnectionState::Reading && $this->head === null && $this->parser->isIdle();
    }

    /** Whether the response being made may keep the connection open: after a half-close, if more was pipelined. */
    public function mayKeepAlive(): bool
    {
        return !$this->peerClosed || $this->parser->buffered() > 0;
    }

    public function isWaitingForHead(): bool
    {
        return $this->state === ConnectionState::Reading && $this->head === null && $this->headStartedAt > 0.0;
    }

    /** Bytes of a next request were read already (pipelined), not parsed yet. */
    public function hasBufferedRequest(): bool
    {
        return $this->parser->buffered() > 0;
    }

    public function isReadingBody(): bool
    {
        return $this->state === ConnectionState::Reading && $this->head !== null;
    }

    /** The head of the request whose body is being read (isReadingBody()), else null. */
    public function bodyHead(): ?RequestHead
    {
        return $this->isReadingBody() ? $this->head : null;
    }

    /**
     * For a graceful stop: a request the client already sent is served (with Connection: close), an event stream
     * ends. An idle connection is left to the drain (HttpCore::startDraining()), which closes it at once or after
     * its grace.
     */
    public function drain(): void
    {
        if ($this->pushed !== null) {
            $this->pushed->end(); // the client reconnects (to a new worker) with its Last-Event-ID
            return;
        }
        if ($this->isIdle()) {
            $this->onReadable();
        }
    }

    private function onReadable(): void
    {
        $data = @\fread($this->socket, 65536);
        if ($data === false || $data === '') {
            if ($data === false || feof($this->socket)) {
                $this->peerGone();
            }
            return;
        }
        // Loop::now()'s clock, read directly (two calls less on every read).
        $this->lastActivityAt = $now = \hrtime(true) / 1e9;
        $this->parser->feed($data);
        if ($this->state === ConnectionState::Reading) {
            if ($this->head === null && $this->headStartedAt === 0.0) {
                $this->headStartedAt = $now;
            }
            $this->parse();
        } elseif ($this->parser->buffered() > $this->limits->headerBytes + 65536) {
            // A client pipelining faster than we answer: stop reading until the current response is out.
            $this->pauseReading();
        }
    }

    /** Parse and dispatch as long as the connection is free to take the next request. */
    public function parse(): void
    {
        while ($this->state === ConnectionState::Reading) {
            try {
                $item = $this->parser->next();
            } catch (ParseException $error) {
                $this->core->reject($this, $error->status, $error->getMessage(), $error->head);
                return;
            }
            if ($item === null) {
                if ($this->peerClosed) { // nothing more will arrive: a partial request never completes
                    $this->closeAfterFlush();
                    return;
                }
                if ($this->head === null) {
                    $this->headStartedAt = $this->parser->isIdle() ? 0.0 : ($this->headStartedAt ?: Loop::now());
                }
                return;
            }
            if ($item instanceof RequestHead) {
                $this->headStartedAt = 0.0;
                if ($item->bodyKind !== RequestHead::BODY_NONE) {
                    $this->head = $item;
                    $this->body = new BodyBuffer($this->limits->bodyMemory);
                    $this->lastBodyAt = $this->bodyStartedAt = Loop::now();
                    if ($item->expectContinue) {
                        $this->write($this->core->encoder->continue());
                    }
                    continue;
                }
                $request = new Request($item, '', null, $this->remoteAddress, $this->remotePort, $this->localAddress, $this->localPort, $this->batch);
            } else {
                \assert($this->head !== null && $this->body !== null);
                if ($item instanceof BodyChunk) {
                    $this->lastBodyAt = Loop::now();
                    try {
                        $this->body->append($item->data);
                    } catch (\RuntimeException $e) {
                        $this->core->reject($this, 507, $e->getMessage());
                        return;
                    }
                    continue;
                }
                $request = new Request($this->head, $this->body->bytes(), $this->body->file(), $this->remoteAddress, $this->remotePort, $this->localAddress, $this->localPort, $this->batch);
                $this->head = null;
                $this->body = null;
            }
            // Dispatched: the handler runs at the end of the loop turn, with the other requests read in it, in one
            // Fiber (see Loop::queueAsync()); until then the request is queued (isQueued()). The connection is
            // responding now, which ends this loop. (Written here, not in a method: a call less per request.)
            $this->state = ConnectionState::Responding;
            $this->responseStarted = false;
            $this->pending = $request;
            Loop::queueAsync($this->runner ??= function (): void {
                $request = $this->pending;
                if ($request === null) {
                    return; // the connection closed before its turn
                }
                $this->pending = null;
                $this->core->respond($this, $request);
            });
        }
    }

    /**
     * The method of the request that came but has not started: queued, its body being read, or its head or pipelined
     * bytes still in the parser (null until its request line is all there).
     */
    public function waitingMethod(): ?string
    {
        return $this->pending?->method() ?? $this->head->method ?? UnstartedRequests::method($this->parser->peek(32));
    }

    /**
     * The request not yet started (its body being read, or queued) was sent `100 Continue` (parse() sends one for every
     * head with a body that asks): its client has part of an answer.
     */
    public function sentContinue(): bool
    {
        $head = $this->pending->head ?? $this->head;
        return $head !== null && $head->expectContinue && $head->bodyKind !== RequestHead::BODY_NONE;
    }

    /** A request was dispatched and its handler has not started yet (it waits for the end of the loop turn). */
    public function isQueued(): bool
    {
        return $this->pending !== null;
    }

    /** The response now being sent is an event stream, open until it or the connection ends. */
    public function push(PushedStream $pushed): void
    {
        $this->pushed = $pushed;
    }

    public function pushing(): bool
    {
        return $this->pushed !== null;
    }

    /** Ends the event stream this connection is sending, if any (the worker ends); true if there was one. */
    public function endPush(): bool
    {
        $pushed = $this->pushed;
        $pushed?->end();
        return $pushed !== null;
    }

    /** Called by the core once a response is fully queued; $core is the core's state then. */
    public function responded(bool $keepAlive, CoreState $core): void
    {
        $this->pushed = null;
        $this->served++;
        $this->lastActivityAt = \hrtime(true) / 1e9; // Loop::now()'s clock
        if ($this->state !== ConnectionState::Responding) {
            return;
        }
        // Once the client closed its side, only requests already received are served; once the process ends
        // (finishing) or the core stopped, none more. Serving is tested first: one comparison of the state on the
        // usual path. Winding down, a response still kept alive is one whose head went out before: the connection
        // stays, and its next response closes it. Draining, a response is kept alive only within the drain's idle
        // grace (HttpCore::startDraining()): the connection waits for a next request, answered with close.
        if ($core === CoreState::Serving || $core === CoreState::WindingDown
            ? !$keepAlive || ($this->peerClosed && $this->parser->buffered() === 0)
            : !$keepAlive || $core !== CoreState::Draining || ($this->peerClosed && $this->parser->buffered() === 0)) {
            $this->closeAfterFlush();
            return;
        }
        $this->state = ConnectionState::Reading;
        if (!$this->reading && !$this->peerClosed) {
            $this->reading = true;
            Loop::enable($this->readId);
        }
        if ($this->parser->buffered() > 0) {
            // Pipelined bytes: parse on the next tick, so a long pipeline never nests Fibers deeply.
            Loop::defer(function (): void {
                if ($this->state === ConnectionState::Reading && $this->headStartedAt === 0.0) {
                    $this->headStartedAt = Loop::now();
                }
                $this->parse();
            });
        }
    }

    public function write(string $bytes): void
    {
        $this->responseStarted = true;
        $this->output->write($bytes);
    }

    private function onWritable(): void
    {
        if (!$this->output->flush() || ($this->state === ConnectionState::Closing && $this->output->pending() === 0)) {
            $this->close();
        }
    }

    public function closeAfterFlush(): void
    {
        if ($this->state === ConnectionState::Closed || $this->state === ConnectionState::Detached) {
            return;
        }
        $this->state = ConnectionState::Closing;
        $this->output->ending = true;
        $this->pauseReading();
        if ($this->output->pending() === 0) {
            $this->close();
        }
    }

    private function pauseReading(): void
    {
        if ($this->reading) {
            $this->reading = false;
            Loop::disable($this->readId);
        }
    }

    private function peerGone(): void
    {
        // The client may only have half-closed: the response in progress, what is still queued, and the
        // requests it pipelined before closing are all still sent (responded() and parse() close after).
        $this->peerClosed = true;
        $this->pauseReading();
        if ($this->pushed !== null) {
            $this->close(); // an event stream has no end: a client that closes its side has left
            return;
        }
        if ($this->state === ConnectionState::Reading) {
            $this->parse();
        }
    }

    /** Lets go of the socket for another protocol; returns the bytes the client sent past the request. */
    public function detach(): string
    {
        $this->release(ConnectionState::Detached);
        return $this->parser->takeBuffer();
    }

    public function close(): void
    {
        if ($this->state === ConnectionState::Closed || $this->state === ConnectionState::Detached) {
            return;
        }
        // A connection the server ends itself lingers, so a client still sending reads its response; one the
        // client ended, or one whose writes failed, is closed at once.
        $written = $this->state === ConnectionState::Closing && $this->output->pending() === 0;
        $linger = $written && !$this->peerClosed;
        $this->release(ConnectionState::Closed, $written); // a client that half-closed its side counts as written
        if ($linger) {
            LingeringClose::start($this->socket, $this->limits->lingerTimeout);
            return;
        }
        @fclose($this->socket);
    }

    private function release(ConnectionState $state, bool $written = false): void
    {
        $this->state = $state;
        Loop::cancel($this->readId);
        $this->head = null;
        $this->body = null;
        $this->runner = null;
        $this->pending = null; // a request still queued is not served
        $this->core->forget($this, $written);
        $this->output->release();
        $pushed = $this->pushed;
        $this->pushed = null;
        $pushed?->connectionClosed();
    }
}
