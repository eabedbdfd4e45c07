<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\Wire\BodyChunk;
use Kiln\Http\Wire\ParseError;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\RequestParser;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;

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

    public float $lastBodyAt = 0.0;

    public float $lastWriteAt = 0.0;

    public int $served = 0;

    /** The client closed its side; the response in progress is still sent. */
    public bool $peerClosed = false;

    private readonly RequestParser $parser;

    private readonly string $readId;

    private ?string $writeId = null;

    private bool $reading = true;

    private string $out = '';

    private ?RequestHead $head = null;

    private ?BodyBuffer $body = null;

    private ?Suspension $drainWaiter = null;

    private readonly \Closure $runner;

    private ?Request $pending = null;

    /** @param resource $socket */
    public function __construct(
        public readonly mixed $socket,
        public readonly int $id,
        private readonly HttpCore $core,
        private readonly Limits $limits,
        public readonly string $remoteAddress,
        public readonly int $remotePort,
    ) {
        $this->parser = new RequestParser($limits);
        $this->lastActivityAt = Loop::now();
        $this->runner = $this->run(...);
        $this->readId = Loop::onReadable($socket, $this->onReadable(...));
    }

    public function isIdle(): bool
    {
        return $this->state === ConnectionState::Reading && $this->head === null && $this->out === ''
            && $this->parser->isIdle();
    }

    /** Bytes queued for the client and not yet accepted by the kernel. */
    public function pendingOutput(): int
    {
        return \strlen($this->out);
    }

    public function isWaitingForHead(): bool
    {
        return $this->state === ConnectionState::Reading && $this->head === null && $this->headStartedAt > 0.0;
    }

    public function isReadingBody(): bool
    {
        return $this->state === ConnectionState::Reading && $this->head !== null;
    }

    /**
     * For a graceful stop: reads what the client may already have sent; a request found is served (with
     * Connection: close, the server being in drain). A keep-alive connection with nothing pending is
     * closed; a connection that has not sent its first request yet is left to the header timeout, since
     * its request may be on the wire.
     */
    public function drain(): void
    {
        if (!$this->isIdle()) {
            return;
        }
        $this->onReadable();
        if ($this->isIdle() && $this->served > 0) {
            $this->close();
        }
    }

    private function onReadable(): void
    {
        $data = @fread($this->socket, 65536);
        if ($data === false || $data === '') {
            if ($data === false || feof($this->socket)) {
                $this->peerGone();
            }
            return;
        }
        $now = Loop::now();
        $this->lastActivityAt = $now;
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
            } catch (ParseError $error) {
                $this->core->reject($this, $error->status, $error->getMessage());
                return;
            }
            if ($item === null) {
                if ($this->head === null) {
                    $this->headStartedAt = $this->parser->isIdle() ? 0.0 : ($this->headStartedAt ?: Loop::now());
                }
                return;
            }
            if ($item instanceof RequestHead) {
                $this->headStartedAt = 0.0;
                if (!$item->hasBody()) {
                    $this->dispatch(new Request($item, '', null, $this->remoteAddress, $this->remotePort));
                    continue;
                }
                $this->head = $item;
                $this->body = new BodyBuffer($this->limits->bodyMemory);
                $this->lastBodyAt = Loop::now();
                if ($item->expectContinue) {
                    $this->write($this->core->encoder->continue());
                }
                continue;
            }
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
            $request = new Request($this->head, $this->body->bytes(), $this->body->file(), $this->remoteAddress, $this->remotePort);
            $this->head = null;
            $this->body = null;
            $this->dispatch($request);
        }
    }

    private function dispatch(Request $request): void
    {
        $this->state = ConnectionState::Responding;
        $this->pending = $request;
        Loop::async($this->runner);
    }

    private function run(): void
    {
        $request = $this->pending;
        \assert($request !== null);
        $this->pending = null;
        $this->core->respond($this, $request);
    }

    /** Called by the core once a response is fully queued. */
    public function responded(bool $keepAlive): void
    {
        $this->served++;
        $this->lastActivityAt = Loop::now();
        if ($this->state !== ConnectionState::Responding) {
            return;
        }
        if (!$keepAlive || $this->peerClosed) {
            $this->closeAfterFlush();
            return;
        }
        $this->state = ConnectionState::Reading;
        if (!$this->reading) {
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
        if ($this->state === ConnectionState::Closed || $this->state === ConnectionState::Detached) {
            return;
        }
        if ($this->out === '') {
            $written = @fwrite($this->socket, $bytes);
            if ($written === false) {
                $this->close();
                return;
            }
            if ($written === \strlen($bytes)) {
                return;
            }
            $this->out = substr($bytes, $written);
            $this->lastWriteAt = Loop::now();
            if ($this->writeId === null) {
                $this->writeId = Loop::onWritable($this->socket, $this->onWritable(...));
            } else {
                Loop::enable($this->writeId);
            }
            return;
        }
        $this->out .= $bytes;
    }

    /**
     * Suspends the calling Fiber while more than $threshold bytes (default: the write buffer limit) are
     * queued. False once the connection is gone.
     */
    public function awaitDrain(?int $threshold = null): bool
    {
        $threshold ??= $this->limits->writeBuffer;
        while (\strlen($this->out) > $threshold) {
            if ($this->state === ConnectionState::Closed) {
                return false;
            }
            $this->drainWaiter = Loop::getSuspension();
            $this->drainWaiter->suspend();
        }
        return $this->state !== ConnectionState::Closed && $this->state !== ConnectionState::Detached;
    }

    private function onWritable(): void
    {
        $written = @fwrite($this->socket, $this->out);
        if ($written === false) {
            $this->close();
            return;
        }
        if ($written > 0) {
            $this->lastWriteAt = Loop::now();
            $this->out = (string) substr($this->out, $written);
        }
        if ($this->out === '') {
            \assert($this->writeId !== null);
            Loop::disable($this->writeId);
            if ($this->state === ConnectionState::Closing) {
                $this->close();
                return;
            }
        }
        if ($this->drainWaiter !== null && ($this->out === '' || \strlen($this->out) <= $this->limits->writeBuffer)) {
            $waiter = $this->drainWaiter;
            $this->drainWaiter = null;
            $waiter->resume();
        }
    }

    public function closeAfterFlush(): void
    {
        if ($this->state === ConnectionState::Closed || $this->state === ConnectionState::Detached) {
            return;
        }
        $this->state = ConnectionState::Closing;
        $this->pauseReading();
        if ($this->out === '') {
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
        $this->peerClosed = true;
        if ($this->state === ConnectionState::Responding) {
            // Finish the response in progress (the client may only have half-closed); stop reading.
            $this->pauseReading();
            return;
        }
        $this->close();
    }

    /**
     * Lets go of the socket for another protocol.
     *
     * @return string bytes the client sent past the current request
     */
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
        $this->release(ConnectionState::Closed);
        @fclose($this->socket);
    }

    private function release(ConnectionState $state): void
    {
        $this->state = $state;
        Loop::cancel($this->readId);
        if ($this->writeId !== null) {
            Loop::cancel($this->writeId);
        }
        $this->out = '';
        $this->head = null;
        $this->body = null;
        $this->core->forget($this);
        if ($this->drainWaiter !== null) {
            $waiter = $this->drainWaiter;
            $this->drainWaiter = null;
            $waiter->resume();
        }
    }
}
