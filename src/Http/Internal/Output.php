<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\WriteBatch;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;

/**
 * The sending side of a Connection: bytes queued for the loop turn's batch (WriteBatch) or that the kernel
 * did not take yet, the writable watcher, and the Fibers waiting on them (backpressure) or on a response
 * body's source stream. release() wakes every waiter and drops the callback into the Connection, so a
 * closed connection leaves no cycle behind.
 *
 * @internal
 */
final class Output
{
    /** When a write was last tried with the queue's bytes or accepted some (for the write timeout). */
    public float $lastWriteAt = 0.0;

    /**
     * Set by the owner once it ends after the queue is written (a connection closing, a WebSocket session
     * ending): send() then leaves every write to $onWritable, so the owner sees the queue empty and ends.
     * Until then send() writes a queue the kernel takes whole itself, without calling the owner.
     */
    public bool $ending = false;

    private string $out = '';

    /** What is queued waits for WriteBatch: no write was tried yet. */
    private bool $batched = false;

    private ?string $writeId = null;

    private bool $open = true;

    /** The Fiber waiting for the queue to shrink. */
    private ?Suspension $drainWaiter = null;

    /** The Fiber waiting for a body's source stream to become readable. */
    private ?Suspension $sourceWaiter = null;

    /**
     * @param resource $socket
     * @param WriteBatch $batch the batch of the loop turn this output's responses leave with
     * @param \Closure(): void $onWritable the Connection's writable handler: it calls flush()
     */
    public function __construct(
        private readonly mixed $socket,
        private readonly int $limit,
        private readonly WriteBatch $batch,
        private ?\Closure $onWritable,
    ) {}

    public function pending(): int
    {
        return \strlen($this->out);
    }

    /**
     * Queues bytes after those still pending (dropped once released). They are written with the loop turn's
     * other responses (WriteBatch), or at once when they reach WriteBatch::LARGE, or after those still
     * pending once the socket is writable.
     */
    public function write(string $bytes): void
    {
        if (!$this->open) {
            return;
        }
        if ($this->out !== '') {
            $this->out .= $bytes;
            if ($this->batched && (\strlen($this->out) >= WriteBatch::LARGE || $this->batch->overdue())) {
                $this->send(); // a large or streamed response goes out as it grows
            }
            return;
        }
        $this->out = $bytes;
        $this->batched = true;
        if (\strlen($bytes) >= WriteBatch::LARGE) {
            $this->send();
            return;
        }
        $this->batch->add($this);
    }

    /**
     * Writes what is queued for the batch, if it was not written yet. A socket that failed closes its
     * connection (through the writable handler, as a failed flush does).
     */
    public function send(): void
    {
        if (!$this->batched) {
            return;
        }
        $this->batched = false;
        if ($this->out === '' || $this->onWritable === null) {
            return;
        }
        if ($this->writeId === null && !$this->ending) {
            // The usual case: the kernel takes the whole queue at once, and the connection goes on (with
            // nothing pending, no write timeout runs: lastWriteAt is not needed).
            $written = @\fwrite($this->socket, $this->out);
            if ($written === \strlen($this->out)) {
                $this->out = '';
                $waiter = $this->drainWaiter;
                $this->drainWaiter = null;
                $waiter?->resume();
                return;
            }
            if (\is_int($written) && $written > 0) {
                $this->out = substr($this->out, $written);
            }
        }
        $this->lastWriteAt = \hrtime(true) / 1e9; // Loop::now()'s clock, read now: the write timeout starts here
        ($this->onWritable)(); // the rest waits for the socket to be writable, or a failed socket closes
    }

    /** Whether what is queued waits for WriteBatch (no write tried yet: the write timeout has not started). */
    public function isBatched(): bool
    {
        return $this->batched;
    }

    /**
     * Sends what the kernel takes now; the rest waits for the socket to be writable. False when the socket
     * failed.
     */
    public function flush(): bool
    {
        $written = @\fwrite($this->socket, $this->out);
        if ($written === false) {
            return false;
        }
        if ($written > 0) {
            $this->lastWriteAt = Loop::now();
            $this->out = (string) substr($this->out, $written);
        }
        if ($this->out === '') {
            if ($this->writeId !== null) {
                Loop::disable($this->writeId);
            }
        } elseif ($this->writeId !== null) {
            Loop::enable($this->writeId);
        } elseif ($this->onWritable !== null) {
            $this->writeId = Loop::onWritable($this->socket, $this->onWritable);
        }
        if ($this->drainWaiter !== null && \strlen($this->out) <= $this->limit) {
            $waiter = $this->drainWaiter;
            $this->drainWaiter = null;
            $waiter->resume();
        }
        return true;
    }

    /**
     * Suspends the calling Fiber while more than $threshold bytes (default: the write buffer limit) are
     * queued. False once the output is released (connection closed or handed over).
     */
    public function awaitDrain(?int $threshold = null): bool
    {
        $threshold ??= $this->limit;
        while ($this->open && \strlen($this->out) > $threshold) {
            $this->drainWaiter = Loop::getSuspension();
            $this->drainWaiter->suspend();
        }
        return $this->open;
    }

    /**
     * Suspends the calling Fiber until $stream is readable or the output is released, so a body read
     * from a pipe or socket never blocks the worker nor outlives its client. False once released.
     *
     * @param resource $stream
     */
    public function awaitReadable(mixed $stream): bool
    {
        if (!$this->open) {
            return false;
        }
        $this->sourceWaiter = Loop::getSuspension();
        $watcher = Loop::onReadable($stream, $this->wakeSource(...));
        try {
            $this->sourceWaiter->suspend();
        } finally {
            Loop::cancel($watcher);
            $this->sourceWaiter = null;
        }
        return $this->open;
    }

    /** Drops what is queued, stops watching the socket and wakes every waiting Fiber (each once). */
    public function release(): void
    {
        $this->open = false;
        $this->out = '';
        $this->batched = false;
        $this->onWritable = null;
        if ($this->writeId !== null) {
            Loop::cancel($this->writeId);
            $this->writeId = null;
        }
        $waiter = $this->drainWaiter;
        $this->drainWaiter = null;
        $waiter?->resume();
        $this->wakeSource();
    }

    private function wakeSource(): void
    {
        $waiter = $this->sourceWaiter;
        $this->sourceWaiter = null;
        $waiter?->resume();
    }
}
