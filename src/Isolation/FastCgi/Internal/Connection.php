<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

use Kiln\Isolation\FastCgi\RecordDecoder;
use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\Driver;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;

/**
 * One non-blocking connection to a responder and the decoder of what it sends.
 *
 * @internal
 */
final class Connection
{
    private const READ_SIZE = 65536;

    public readonly RecordDecoder $decoder;
    /** Requests started on this connection; > 1 means it was reused from the pool. */
    public int $requests = 0;
    /** Bytes of the current request the socket accepted, and bytes read back for it. */
    public int $written = 0;
    public int $received = 0;
    /** Reads made on the socket, those that found nothing included. */
    public int $reads = 0;
    /** False while a write is unfinished: the byte stream is then inside a record and nothing else may be sent. */
    public bool $atRecordBoundary = true;
    /** Loop::now() when it last went idle in the pool. */
    public float $idleSince = 0.0;
    /** Whether the current request asked the responder to keep the connection (FCGI_KEEP_CONN). */
    public bool $keep = false;
    /** A request is on it: from startRequest() until the pool takes the connection back (release or discard). */
    public bool $busy = false;
    /** Loop::now() when it was opened. */
    public readonly float $openedAt;

    /**
     * The readable watcher, made at the first wait (not per wait), on the loop it was made on; the Fiber waiting
     * now. It stays enabled from one wait to the next: it is disabled only when it fires with no Fiber waiting
     * (the response's Fiber waits for its client, or the request is over), since level-triggered it would
     * report the same bytes on every turn. Toggling it around each wait cost a worker about 16 µs per piece of a
     * streamed page (docs/design/007). It holds no reference on the loop: a wait does, through its timer.
     */
    private ?string $watcher = null;
    private ?Driver $driver = null;
    private ?Suspension $reader = null;

    /**
     * The last read found the socket empty, or left it so (fewer bytes than asked for): the next fill() waits
     * for readiness before it reads, instead of making a read that would find nothing. Exact because the
     * stream has no PHP read buffer: what epoll does not see, no read would find.
     */
    private bool $drained = true;

    /** @param resource $stream non-blocking, connected; its PHP read buffer is turned off here */
    public function __construct(
        private readonly mixed $stream,
        /** The pool key: the responder's canonical address. */
        public readonly string $key,
        private readonly ?Timeouts $timeouts = null,
    ) {
        \stream_set_read_buffer($stream, 0);
        $this->decoder = new RecordDecoder();
        $this->openedAt = Loop::now();
    }

    public function startRequest(bool $keep): void
    {
        $this->keep = $keep;
        $this->busy = true;
        $this->requests++;
        $this->written = 0;
        $this->received = 0;
    }

    /**
     * Writes whole records, suspending while the socket is full.
     *
     * @throws ConnectionLostException|CancelledException|\Kiln\Isolation\FastCgi\FastCgiTimeoutException
     */
    public function write(string $bytes, Deadline $deadline, ?Cancellation $cancellation): void
    {
        $this->atRecordBoundary = false;
        while ($bytes !== '') {
            \error_clear_last();
            $n = @\fwrite($this->stream, $bytes);
            if ($n === false || ($n === 0 && $this->isClosed())) {
                throw new ConnectionLostException('Writing to the responder failed: ' . (\error_get_last()['message'] ?? 'connection closed'));
            }
            $this->written += $n;
            $bytes = (string) \substr($bytes, $n);
            if ($bytes !== '' && !Await::stream($this->stream, true, $deadline->next(), $cancellation)) {
                throw $deadline->timeout('it did not read the request');
            }
        }
        $this->atRecordBoundary = true;
    }

    /**
     * Sends a few bytes only if the socket takes them all at once (for ABORT_REQUEST from any context).
     */
    public function writeNow(string $bytes): bool
    {
        if (!$this->atRecordBoundary || $this->isClosed()) {
            return false;
        }
        $n = @\fwrite($this->stream, $bytes);
        if ($n !== \strlen($bytes)) {
            $this->atRecordBoundary = $n === 0;

            return false;
        }

        return true;
    }

    /**
     * Feeds the decoder with the next bytes, suspending until some arrive. It waits before the first read when
     * the last read emptied the socket, or when $readFirst is false (right after a request went out, a read
     * would only find nothing).
     *
     * @throws ConnectionLostException at end of stream or on a read error
     * @throws CancelledException|\Kiln\Isolation\FastCgi\FastCgiTimeoutException
     */
    public function fill(Deadline $deadline, ?Cancellation $cancellation, bool $readFirst = true): void
    {
        if (!$readFirst || $this->drained) {
            $this->await($deadline, $cancellation);
        }
        while ($this->readNow() === '') {
            $this->await($deadline, $cancellation);
        }
    }

    /**
     * Reads what is there without waiting and feeds it to the decoder; '' when nothing is there yet.
     *
     * @throws ConnectionLostException
     */
    public function readNow(): string
    {
        \error_clear_last();
        $this->reads++;
        $bytes = @\fread($this->stream, self::READ_SIZE);
        $this->drained = $bytes === false || \strlen($bytes) < self::READ_SIZE;
        if ($bytes === false) {
            throw new ConnectionLostException('Reading from the responder failed: ' . (\error_get_last()['message'] ?? 'unknown error'));
        }
        if ($bytes === '') {
            if ($this->isClosed()) {
                throw new ConnectionLostException('The responder closed the connection');
            }

            return '';
        }
        $this->received += \strlen($bytes);
        $this->decoder->feed($bytes);

        return $bytes;
    }

    /** An idle connection is usable if the responder neither closed it nor sent anything unasked. */
    public function isUsable(): bool
    {
        if (!\is_resource($this->stream) || $this->decoder->buffered() > 0) {
            return false;
        }

        // One peek: false is "nothing to read yet" (EAGAIN); '' is the end of the stream; bytes were unasked for.
        return @\stream_socket_recvfrom($this->stream, 1, \STREAM_PEEK) === false;
    }

    /** @throws CancelledException|\Kiln\Isolation\FastCgi\FastCgiTimeoutException */
    private function await(Deadline $deadline, ?Cancellation $cancellation): void
    {
        if ($cancellation !== null || $this->timeouts === null) {
            if (!Await::stream($this->stream, false, $deadline->next(), $cancellation)) {
                throw $deadline->timeout('no response');
            }

            return;
        }
        $driver = Loop::get();
        if ($this->watcher === null || $this->driver !== $driver) {
            $this->driver = $driver;
            $connection = \WeakReference::create($this);
            $this->watcher = $driver->onReadableUnbuffered($this->stream, static function (string $id) use ($connection, $driver): void {
                $live = $connection->get();
                if ($live === null) {
                    $driver->cancel($id); // dropped without close(): nothing would ever read what arrives
                    return;
                }
                $live->readable();
            });
            $driver->unreference($this->watcher);
        } else {
            $driver->enable($this->watcher); // nothing to do when the last wait left it on
        }
        if ($this->suspend($this->timeouts, $deadline->next()) !== true) {
            throw $deadline->timeout('no response');
        }
    }

    /**
     * Suspends until readable() or the timeout wakes the Fiber: true when readable. The wait's registrations end
     * however it ends, written out after the catch rather than in a finally: the JIT traces no finally, and a trace
     * runs from the callers into this wait (docs/design/010-no-finally-on-the-hot-path.md). A Fiber destroyed here
     * would skip both, but it cannot be: $this->reader holds it for as long as this connection lives.
     */
    private function suspend(Timeouts $timeouts, float $seconds): mixed
    {
        $suspension = Loop::getSuspension();
        $this->reader = $suspension;
        $timeout = $timeouts->add($this, $seconds);
        try {
            $readable = $suspension->suspend();
        } catch (\Throwable $error) {
            $this->reader = null;
            $timeouts->remove($timeout);
            throw $error;
        }
        $this->reader = null;
        $timeouts->remove($timeout);
        return $readable;
    }

    /** The watcher fired: wakes the Fiber waiting, or, with none waiting, turns the watcher off until the next wait. */
    private function readable(): void
    {
        if ($this->reader !== null) {
            $this->wake(true);
        } elseif ($this->watcher !== null) {
            $this->driver?->disable($this->watcher);
        }
    }

    /** The wait ran out of time (Timeouts). */
    public function timeOut(): void
    {
        $this->wake(false);
    }

    private function wake(bool $readable): void
    {
        $reader = $this->reader;
        if ($reader !== null) {
            $this->reader = null;
            $reader->resume($readable);
        }
    }

    /** @return resource */
    public function stream(): mixed
    {
        return $this->stream;
    }

    public function close(): void
    {
        if ($this->watcher !== null && $this->driver === Loop::get()) {
            $this->driver->cancel($this->watcher);
        }
        $this->watcher = null;
        if (\is_resource($this->stream)) {
            \fclose($this->stream);
        }
    }

    private function isClosed(): bool
    {
        return !\is_resource($this->stream) || \feof($this->stream);
    }
}
