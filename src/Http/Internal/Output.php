<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;

/**
 * The sending side of a Connection: bytes the kernel did not take yet, the writable watcher, and the
 * Fibers waiting on them (backpressure) or on a response body's source stream. release() wakes every
 * waiter and drops the callback into the Connection, so a closed connection leaves no cycle behind.
 *
 * @internal
 */
final class Output
{
    /** When the last byte was accepted by the kernel after a partial write (for the write timeout). */
    public float $lastWriteAt = 0.0;

    private string $out = '';

    private ?string $writeId = null;

    private bool $open = true;

    /** The Fiber waiting for the queue to shrink. */
    private ?Suspension $drainWaiter = null;

    /** The Fiber waiting for a body's source stream to become readable. */
    private ?Suspension $sourceWaiter = null;

    /**
     * @param resource $socket
     * @param \Closure(): void $onWritable the Connection's writable handler: it calls flush()
     */
    public function __construct(
        private readonly mixed $socket,
        private readonly int $limit,
        private ?\Closure $onWritable,
    ) {}

    public function pending(): int
    {
        return \strlen($this->out);
    }

    /** Queues bytes after those still pending (dropped once released); false when the socket failed. */
    public function write(string $bytes): bool
    {
        if (!$this->open) {
            return true;
        }
        if ($this->out !== '') {
            $this->out .= $bytes;
            return true;
        }
        $written = @fwrite($this->socket, $bytes);
        if ($written === false) {
            return false;
        }
        if ($written === \strlen($bytes)) {
            return true;
        }
        $this->out = substr($bytes, $written);
        $this->lastWriteAt = Loop::now();
        if ($this->writeId !== null) {
            Loop::enable($this->writeId);
        } elseif ($this->onWritable !== null) {
            $this->writeId = Loop::onWritable($this->socket, $this->onWritable);
        }
        return true;
    }

    /** Sends what the kernel takes now (the socket is writable); false when the socket failed. */
    public function flush(): bool
    {
        $written = @fwrite($this->socket, $this->out);
        if ($written === false) {
            return false;
        }
        if ($written > 0) {
            $this->lastWriteAt = Loop::now();
            $this->out = (string) substr($this->out, $written);
        }
        if ($this->out === '' && $this->writeId !== null) {
            Loop::disable($this->writeId);
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
