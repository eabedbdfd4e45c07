<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket\Internal;

use Kiln\Http\Internal\LingeringClose;
use Kiln\Http\Internal\Output;
use Kiln\Http\Limits;
use Kiln\Http\WebSocket\Close;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\Ping;
use Kiln\Http\WebSocket\Protocol;
use Kiln\Http\WebSocket\ProtocolViolation;
use Kiln\Http\WebSocket\WebSocketHandler;
use Kiln\Loop\Loop;

/**
 * The I/O side of one WebSocket connection. It lives on a readable watcher and its buffers: bytes read are
 * fed to the sans-I/O Protocol, and the messages it yields wait in the HandlerQueue, which takes a pooled
 * Fiber only while the handler runs (one at a time per connection, so messages are handled in order). Output goes
 * through the same Output (and WriteBatch) as HTTP responses, bounded by Limits::$wsWriteBuffer.
 *
 * Closing: the side that closes first sends a close frame; the server then reads until the client's close
 * frame (or the close timeout), stops reading, writes what is left and closes the socket with a lingering
 * close, so the client reads the close frame rather than a reset.
 *
 * @internal
 */
final class Session
{
    public readonly Connection $connection;

    public readonly float $createdAt;

    private SessionState $state = SessionState::Pending;

    /** @var resource|null */
    private mixed $socket = null;

    private ?Output $output = null;

    private ?string $readId = null;

    private bool $reading = false;

    /** Frames sent while Pending (from onOpen): they follow the 101. */
    private string $early = '';

    private readonly HandlerQueue $queue;

    private float $lastReceivedAt;

    private bool $pinged = false;

    /**
     * The payload of the client's latest ping not answered yet. Pings read together get one pong, and while the
     * client does not read what it was sent, the pong waits here for the queue to drain, later pings replacing it
     * (RFC 6455 §5.5.3): a client that pings and never reads makes the queue no longer.
     */
    private ?string $pong = null;

    /** Closing / Ending: when the socket is cut whatever is left. */
    private float $deadline = INF;

    /** Closing before the socket was ours: how long the client will have to answer, from then. */
    private float $closeTimeout = 0.0;

    public function __construct(
        private readonly Sessions $sessions,
        private readonly Protocol $protocol,
        WebSocketHandler $handler,
        private readonly Limits $limits,
        Connection $connection,
    ) {
        $this->connection = $connection;
        $this->createdAt = $this->lastReceivedAt = Loop::now();
        $this->queue = new HandlerQueue($handler, $connection, $sessions, fn() => $this->fail(1011, 'internal error'), $this->resumeReading(...));
    }

    public function isOpen(): bool
    {
        return $this->state === SessionState::Open || $this->state === SessionState::Pending;
    }

    public function isClosed(): bool
    {
        return $this->state === SessionState::Closed;
    }

    /** Takes the socket over after the 101: $rest is what the client sent past the handshake. */
    public function attach(mixed $socket, string $rest): void
    {
        if (!\is_resource($socket)) {
            $this->lost();
            return;
        }
        if ($this->state === SessionState::Closed) { // given up on while the 101 was on its way
            @fclose($socket);
            return;
        }
        $this->socket = $socket;
        $this->output = new Output($socket, $this->limits->wsWriteBuffer, $this->sessions->batch(), $this->onWritable(...));
        $this->lastReceivedAt = Loop::now();
        $this->readId = Loop::onReadable($socket, $this->onReadable(...));
        $this->reading = true;
        if ($this->state === SessionState::Pending) {
            $this->state = SessionState::Open;
        } elseif ($this->state === SessionState::Closing) {
            $this->deadline = Loop::now() + $this->closeTimeout;
        }
        if ($this->early !== '') {
            $this->output->write($this->early);
            $this->early = '';
        }
        if ($rest !== '') {
            $this->receive($rest);
        }
        $this->sessions->attached($this);
    }

    /**
     * The 101 will never reach the client: its connection ended while onOpen() ran, or another response went
     * instead. The connection ends at once as one dropped: onClose() is told 1006 (unless onOpen() closed it
     * already), and it leaves its rooms and the worker's count.
     */
    public function lost(): void
    {
        if ($this->output !== null || $this->state === SessionState::Closed) {
            return; // the socket was handed over: its reads and writes see it end
        }
        $this->notifyClose(1006, '');
        $this->cut();
    }

    /** onOpen() returned: the handler may be called from now on. */
    public function opened(): void
    {
        $this->queue->opened();
    }

    /** onOpen() refused the connection: nothing was sent, and no onClose() is owed. */
    public function abandon(): void
    {
        $this->queue->abandon();
        $this->cut();
    }

    /** A frame the application sends. False when it was not queued (closed, or the client reads too slowly). */
    public function send(string $frame): bool
    {
        if ($this->state === SessionState::Pending) {
            if (\strlen($this->early) > $this->limits->wsWriteBuffer) {
                return false; // bounded before the 101 as after it
            }
            $this->early .= $frame;
            return true;
        }
        if ($this->state !== SessionState::Open || $this->output === null) {
            return false;
        }
        $pending = $this->output->pending();
        if ($pending > $this->limits->wsWriteBuffer) {
            $this->sessions->log('warning', 'WebSocket connection ' . $this->connection->id() . ' from '
                . $this->connection->remoteAddress() . " closed with 1008: the client does not read ($pending bytes "
                . "queued, over --limit-ws-write-buffer={$this->limits->wsWriteBuffer})");
            $this->fail(1008, 'slow consumer: output buffer full');
            return false;
        }
        $this->output->write($frame);
        return true;
    }

    /** Starts the close handshake: the client has $timeout seconds (default: the close timeout) to answer. */
    public function close(int $code, string $reason, ?float $timeout = null): void
    {
        $timeout ??= $this->limits->wsCloseTimeout;
        if ($this->state === SessionState::Pending) {
            $this->early .= $this->protocol->encodeClose($code, $reason);
            $this->state = SessionState::Closing;
            $this->closeTimeout = $timeout;
            $this->notifyClose($code, $reason);
            return;
        }
        if ($this->state !== SessionState::Open || $this->output === null) {
            return;
        }
        $this->output->write($this->protocol->encodeClose($code, $reason));
        $this->state = SessionState::Closing;
        $this->deadline = Loop::now() + $timeout;
        $this->notifyClose($code, $reason);
    }

    /** Called on the housekeeping tick: pings, idle, write and close timeouts, a handshake never completed. */
    public function tick(float $now, float $pendingTimeout): void
    {
        if ($this->output === null) { // the 101 not handed over yet: Pending, or Closing from onOpen()
            if ($now - $this->createdAt > $pendingTimeout) {
                $this->lost();
            }
            return;
        }
        switch ($this->state) {
            case SessionState::Open:
                if ($this->output->pending() > 0 && !$this->output->isBatched()
                    && $now - $this->output->lastWriteAt > $this->limits->writeTimeout) {
                    // The client sends (so the idle timeout never comes) but takes nothing of what it is sent.
                    $this->sessions->log('warning', 'WebSocket connection ' . $this->connection->id() . ' from '
                        . $this->connection->remoteAddress() . ' dropped: nothing of its ' . $this->output->pending()
                        . " queued bytes was taken for --limit-write-timeout={$this->limits->writeTimeout} s");
                    $this->notifyClose(1006, '');
                    $this->cut();
                    return;
                }
                $silent = $now - $this->lastReceivedAt;
                if ($silent >= $this->limits->wsIdleTimeout) {
                    $this->close(1001, 'idle timeout');
                } elseif (!$this->pinged && $silent >= $this->limits->wsIdleTimeout / 2) {
                    $this->pinged = true;
                    $this->output->write($this->protocol->encodePing());
                }
                return;
            case SessionState::Closing:
            case SessionState::Ending:
                if ($now >= $this->deadline) {
                    $this->cut();
                }
                return;
            case SessionState::Pending: // not with a socket handed over
            case SessionState::Closed:
                return;
        }
    }

    /** The worker stops now: a close frame 1001 if it can leave at once, then the socket closes. */
    public function shutDown(string $reason): void
    {
        if ($this->state === SessionState::Open && $this->output !== null) {
            $this->output->write($this->protocol->encodeClose(1001, $reason));
            $this->output->send();
            if ($this->output->pending() > 0) {
                $this->output->flush();
            }
            $this->notifyClose(1001, $reason);
        } elseif ($this->state === SessionState::Pending) {
            $this->notifyClose(1001, $reason);
        }
        $this->cut();
    }

    private function onReadable(): void
    {
        \assert($this->socket !== null);
        $data = @fread($this->socket, 65536);
        if ($data === false || $data === '') {
            if ($data === false || feof($this->socket)) {
                $this->notifyClose(1006, '');
                $this->cut();
            }
            return;
        }
        $this->receive($data);
    }

    private function receive(string $data): void
    {
        $this->lastReceivedAt = Loop::now();
        $this->pinged = false;
        foreach ($this->protocol->feed($data) as $event) {
            if ($event instanceof Message) {
                if ($this->state === SessionState::Open) {
                    $this->queue->push($event);
                }
            } elseif ($event instanceof Ping) {
                if ($this->state === SessionState::Open) {
                    $this->pong = $event->payload;
                }
            } elseif ($event instanceof Close) {
                $this->answerPing(); // before the close frame: nothing is sent after it
                $this->peerClosed($event->code, $event->reason);
            } elseif ($event instanceof ProtocolViolation) {
                $this->answerPing();
                $this->fail($event->code, $event->reason);
            }
        }
        $this->answerPing();
        if ($this->reading && $this->queue->isFull($this->limits->wsMessageBytes)) {
            $this->reading = false; // the handler is behind: let the client wait, not the worker's memory grow
            \assert($this->readId !== null);
            Loop::disable($this->readId);
        }
        $this->queue->dispatch();
    }

    private function peerClosed(int $code, string $reason): void
    {
        if ($this->state === SessionState::Open) {
            // Echo the code (a close frame without one is answered with 1000), then end: the server closes first.
            $this->output?->write($this->protocol->encodeClose($code === 1005 ? 1000 : $code));
            $this->notifyClose($code, $reason);
        }
        $this->end();
    }

    /** Closes with $code at once, without waiting for the client's close frame (RFC 6455 §7.1.7). */
    private function fail(int $code, string $reason): void
    {
        if ($this->state === SessionState::Open) {
            $this->output?->write($this->protocol->encodeClose($code, $reason));
            $this->notifyClose($code, $reason);
        }
        $this->end();
    }

    /** Nothing more is read; what is queued is written, then the socket closes. */
    private function end(): void
    {
        if ($this->state === SessionState::Ending || $this->state === SessionState::Closed) {
            return;
        }
        $this->state = SessionState::Ending;
        if ($this->output !== null) {
            $this->output->ending = true;
        }
        $this->deadline = min($this->deadline, Loop::now() + $this->limits->wsCloseTimeout);
        if ($this->readId !== null) {
            Loop::disable($this->readId);
            $this->reading = false;
        }
        if ($this->output === null || $this->output->pending() === 0) {
            $this->finish();
        }
    }

    /**
     * Queues the pong for the latest ping, unless the socket has not taken what is queued already (the client
     * does not read): then onWritable() sends it once it has. So a ping never grows the queue by more than one
     * pong, whatever the client sends.
     */
    private function answerPing(): void
    {
        if ($this->pong === null || $this->state !== SessionState::Open || $this->output === null) {
            return;
        }
        if ($this->output->pending() > 0 && !$this->output->isBatched()) {
            return; // the earlier bytes wait for the socket to be writable: the pong waits behind them
        }
        $this->output->write($this->protocol->encodePong($this->pong));
        $this->pong = null;
    }

    private function onWritable(): void
    {
        \assert($this->output !== null);
        if (!$this->output->flush()) {
            $this->notifyClose(1006, '');
            $this->cut();
            return;
        }
        if ($this->output->pending() === 0) {
            if ($this->state === SessionState::Ending) {
                $this->finish();
            } else {
                $this->answerPing();
            }
        }
    }

    /** Everything is written: a lingering close lets the client read the close frame rather than a reset. */
    private function finish(): void
    {
        $socket = $this->socket;
        $this->socket = null;
        $this->release();
        if ($socket !== null) {
            LingeringClose::start($socket, $this->limits->wsCloseTimeout);
        }
    }

    /** Closes the socket now, whatever is queued. */
    private function cut(): void
    {
        $socket = $this->socket;
        $this->socket = null;
        $this->release();
        if ($socket !== null) {
            @fclose($socket);
        }
    }

    private function release(): void
    {
        if ($this->state === SessionState::Closed) {
            return;
        }
        $this->state = SessionState::Closed;
        if ($this->readId !== null) {
            Loop::cancel($this->readId);
            $this->readId = null;
        }
        $this->output?->release();
        $this->early = '';
        $this->pong = null;
        $this->sessions->forget($this);
        $this->queue->dispatch();
    }

    private function notifyClose(int $code, string $reason): void
    {
        $this->queue->closed($code, $reason);
    }

    private function resumeReading(): void
    {
        if (!$this->reading && $this->state === SessionState::Open && $this->readId !== null) {
            $this->reading = true;
            Loop::enable($this->readId);
        }
    }
}
