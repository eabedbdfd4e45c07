<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\Request;
use Kiln\Http\Sse\EventStream;
use Kiln\Http\Sse\Internal\Sink;
use Kiln\Loop\Loop;

/**
 * The wire end of an EventStream on one connection, once its head is out: frames what the stream writes
 * (chunked on HTTP/1.1, as is on 1.0), drops a client that lets more than the write buffer limit queue up,
 * and finishes the response when the stream ends (the server or the handler closed it) or the connection
 * does (the client left). No Fiber waits on it: writes are queued on the connection's Output at once.
 *
 * @internal
 */
final class PushedStream implements Sink
{
    private bool $open = true;

    private int $sent = 0;

    /** When bytes were last queued (heartbeats go to streams quiet for a while). */
    private float $lastWriteAt;

    public function __construct(
        private readonly PushedStreams $streams,
        private readonly Connection $connection,
        private readonly Request $request,
        private readonly EventStream $stream,
        private readonly bool $chunked,
        private readonly bool $keepAlive,
        private readonly int $status,
        private readonly int $limit,
    ) {
        $this->lastWriteAt = Loop::now();
    }

    public function stream(): EventStream
    {
        return $this->stream;
    }

    public function write(string $bytes): bool
    {
        if (!$this->open) {
            return false;
        }
        if ($bytes === '') {
            return true;
        }
        $output = $this->connection->output;
        if ($output->pending() > $this->limit) {
            $this->streams->slowConsumer($this->connection, $this->request, $output->pending());
            $this->connection->close(); // calls connectionClosed()
            return false;
        }
        $this->connection->write($this->chunked ? $this->streams->encoder->chunk($bytes) : $bytes);
        $this->sent += \strlen($bytes);
        $this->lastWriteAt = Loop::now();
        return true;
    }

    /** Sends a heartbeat if nothing was written for $quiet seconds; returns when the next one is due. */
    public function heartbeat(float $now, float $quiet, string $bytes): float
    {
        if ($now - $this->lastWriteAt >= $quiet) {
            $this->write($bytes);
            return $now + $quiet;
        }
        return $this->lastWriteAt + $quiet;
    }

    /** The server or the handler ends the response; the connection goes on to its next request, or closes. */
    public function end(): void
    {
        if (!$this->open) {
            return;
        }
        $this->open = false;
        if ($this->chunked) {
            $this->connection->write($this->streams->encoder->end());
        }
        $this->streams->finished($this, $this->connection, $this->request, $this->status, $this->sent, $this->keepAlive, true);
        $this->stream->ended();
    }

    /** The connection closed under the stream (the client left, a write failed, the worker stops). */
    public function connectionClosed(): void
    {
        if (!$this->open) {
            return;
        }
        $this->open = false;
        $this->streams->finished($this, $this->connection, $this->request, $this->status, $this->sent, false, false);
        $this->stream->ended();
    }
}
