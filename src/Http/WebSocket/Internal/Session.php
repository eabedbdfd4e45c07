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
 * fed to the sans-I/O Protocol, the messages it yields wait in an inbox, and a pooled Fiber is taken only
 * while the handler runs (one at a time per connection, so messages are handled in order). Output goes
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
    /** Messages waiting for the handler past which the socket is not read (the client waits instead). */
    private const INBOX_MESSAGES = 64;

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

    /** @var list<Message> */
    private array $inbox = [];

    private int $inboxBytes = 0;

    private bool $running = false;

    /** @var array{int, string}|null the code and reason onClose() is still to be told */
    private ?array $closeNotice = null;

    private bool $closeNotified = false;

    private float $lastReceivedAt;

    private bool $pinged = false;

    /** Closing / Ending: when the socket is cut whatever is left. */
    private float $deadline = INF;

    /** Closing before the socket was ours: how long the client will have to answer, from then. */
    private float $closeTimeout = 0.0;

    private readonly \Closure $runner;

    public function __construct(
        private readonly Sessions $sessions,
        private readonly Protocol $protocol,
        private readonly WebSocketHandler $handler,
        private readonly Limits $limits,
        Connection $connection,
    ) {
        $this->connection = $connection;
        $this->createdAt = $this->lastReceivedAt = Loop::now();
        $this->runner = $this->run(...);
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
        $this->dispatch();
        if ($rest !== '') {
            $this->receive($rest);
        }
        $this->sessions->attached($this);
    }

    /** The handshake never completed (onOpen refused, or the 101 could not be sent): no onClose(). */
    public function abandon(): void
    {
        $this->closeNotified = true;
        $this->closeNotice = null;
        $this->inbox = [];
        $this->cut();
    }

    /** A frame the application sends. False when it was not queued (closed, or the client reads too slowly). */
    public function send(string $frame): bool
    {
        if ($this->state === SessionState::Pending) {
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

    /** Called on the housekeeping tick: pings, idle and close timeouts, a handshake never completed. */
    public function tick(float $now, float $pendingTimeout): void
    {
        switch ($this->state) {
            case SessionState::Pending:
                if ($now - $this->createdAt > $pendingTimeout) {
                    $this->notifyClose(1006, '');
                    $this->cut();
                }
                return;
            case SessionState::Open:
                $silent = $now - $this->lastReceivedAt;
                if ($silent >= $this->limits->wsIdleTimeout) {
                    $this->close(1001, 'idle timeout');
                } elseif (!$this->pinged && $silent >= $this->limits->wsIdleTimeout / 2) {
                    $this->pinged = true;
                    $this->output?->write($this->protocol->encodePing());
                }
                return;
            case SessionState::Closing:
            case SessionState::Ending:
                if ($now >= $this->deadline) {
                    $this->cut();
                }
                return;
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
                    $this->inbox[] = $event;
                    $this->inboxBytes += \strlen($event->payload);
                }
            } elseif ($event instanceof Ping) {
                if ($this->state === SessionState::Open) {
                    $this->output?->write($this->protocol->encodePong($event->payload));
                }
            } elseif ($event instanceof Close) {
                $this->peerClosed($event->code, $event->reason);
            } elseif ($event instanceof ProtocolViolation) {
                $this->fail($event->code, $event->reason);
            }
        }
        if ($this->reading && (\count($this->inbox) > self::INBOX_MESSAGES || $this->inboxBytes > $this->limits->wsMessageBytes)) {
            $this->reading = false; // the handler is behind: let the client wait, not the worker's memory grow
            \assert($this->readId !== null);
            Loop::disable($this->readId);
        }
        $this->dispatch();
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
        $this->deadline = min($this->deadline, Loop::now() + $this->limits->wsCloseTimeout);
        if ($this->readId !== null) {
            Loop::disable($this->readId);
            $this->reading = false;
        }
        if ($this->output === null || $this->output->pending() === 0) {
            $this->finish();
        }
    }

    private function onWritable(): void
    {
        \assert($this->output !== null);
        if (!$this->output->flush()) {
            $this->notifyClose(1006, '');
            $this->cut();
            return;
        }
        if ($this->state === SessionState::Ending && $this->output->pending() === 0) {
            $this->finish();
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
        $this->sessions->forget($this);
        $this->dispatch();
    }

    /** Remembers what onClose() is told: the first reason the connection ended for wins. */
    private function notifyClose(int $code, string $reason): void
    {
        if ($this->closeNotice === null && !$this->closeNotified) {
            $this->closeNotice = [$code, $reason];
            // On the next tick: never inside the handler whose send() or close() ended this connection.
            Loop::defer($this->dispatch(...));
        }
    }

    /** Runs the handler for what is waiting, in a pooled Fiber, unless one already runs for this connection. */
    private function dispatch(): void
    {
        if ($this->running || $this->state === SessionState::Pending || ($this->inbox === [] && $this->closeNotice === null)) {
            return;
        }
        $this->running = true;
        Loop::async($this->runner);
    }

    private function run(): void
    {
        while (true) {
            $message = array_shift($this->inbox);
            if ($message !== null) {
                $this->inboxBytes -= \strlen($message->payload);
                if (!$this->reading && $this->state === SessionState::Open && $this->inbox === [] && $this->readId !== null) {
                    $this->reading = true;
                    Loop::enable($this->readId);
                }
                try {
                    $this->handler->onMessage($this->connection, $message);
                } catch (\Throwable $e) {
                    $this->sessions->log('error', 'WebSocket handler failed on a message of connection '
                        . $this->connection->id() . ' (closed with 1011): ' . self::describe($e));
                    $this->fail(1011, 'internal error');
                }
                continue;
            }
            if ($this->closeNotice === null || $this->state === SessionState::Pending) {
                break;
            }
            [$code, $reason] = $this->closeNotice;
            $this->closeNotice = null;
            $this->closeNotified = true;
            try {
                $this->handler->onClose($this->connection, $code, $reason);
            } catch (\Throwable $e) {
                $this->sessions->log('error', 'WebSocket handler failed in onClose of connection '
                    . $this->connection->id() . ': ' . self::describe($e));
            }
        }
        $this->running = false;
    }

    private static function describe(\Throwable $e): string
    {
        return $e::class . ': ' . $e->getMessage() . ' at ' . $e->getFile() . ':' . $e->getLine();
    }
}
