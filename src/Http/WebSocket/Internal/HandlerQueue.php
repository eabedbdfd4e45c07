<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket\Internal;

use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\WebSocketHandler;
use Kiln\Loop\Loop;

/**
 * The handler side of one WebSocket connection: the messages waiting for onMessage(), and the onClose() owed.
 * A pooled Fiber runs them only while there is something to run, one at a time and in order; nothing runs
 * before onOpen() returned (the queue is held until opened()).
 *
 * @internal
 */
final class HandlerQueue
{
    /** Messages waiting past which the connection stops reading (the client waits instead). */
    private const MESSAGES = 64;

    /** @var list<Message> */
    private array $messages = [];

    private int $bytes = 0;

    private bool $running = false;

    private bool $held = true;

    /** @var array{int, string}|null the code and reason onClose() is still to be told */
    private ?array $closeNotice = null;

    private bool $closeNotified = false;

    private readonly \Closure $runner;

    private readonly \Closure $dispatcher;

    /**
     * @param \Closure(): void $failed the handler threw: the connection closes with 1011
     * @param \Closure(): void $drained the last waiting message was taken: reading may resume
     */
    public function __construct(
        private readonly WebSocketHandler $handler,
        private readonly Connection $connection,
        private readonly Sessions $sessions,
        private readonly \Closure $failed,
        private readonly \Closure $drained,
    ) {
        $this->runner = $this->run(...);
        $this->dispatcher = $this->dispatch(...);
    }

    /** onOpen() returned: what waits may run. */
    public function opened(): void
    {
        $this->held = false;
        $this->dispatch();
    }

    public function push(Message $message): void
    {
        $this->messages[] = $message;
        $this->bytes += \strlen($message->payload);
    }

    /** Whether the handler is so far behind that the connection should stop reading. */
    public function isFull(int $maxBytes): bool
    {
        return \count($this->messages) > self::MESSAGES || $this->bytes > $maxBytes;
    }

    /** Remembers what onClose() is told: the first reason the connection ended for wins. */
    public function closed(int $code, string $reason): void
    {
        if ($this->closeNotice === null && !$this->closeNotified) {
            $this->closeNotice = [$code, $reason];
            // On the next tick: never inside the handler whose send() or close() ended this connection.
            Loop::defer($this->dispatcher);
        }
    }

    /** The connection never opened (onOpen() refused): nothing more runs, no onClose(). */
    public function abandon(): void
    {
        $this->held = true;
        $this->closeNotified = true;
        $this->closeNotice = null;
        $this->messages = [];
        $this->bytes = 0;
    }

    /** Runs what is waiting in a pooled Fiber, unless one already runs for this connection. */
    public function dispatch(): void
    {
        if ($this->running || $this->held || ($this->messages === [] && $this->closeNotice === null)) {
            return;
        }
        $this->running = true;
        Loop::async($this->runner);
    }

    private function run(): void
    {
        while (true) {
            $message = array_shift($this->messages);
            if ($message !== null) {
                $this->bytes -= \strlen($message->payload);
                if ($this->messages === []) {
                    ($this->drained)();
                }
                try {
                    $this->handler->onMessage($this->connection, $message);
                } catch (\Throwable $e) {
                    $this->sessions->log('error', 'WebSocket handler failed on a message of connection '
                        . $this->connection->id() . ' (closed with 1011): ' . self::describe($e));
                    ($this->failed)();
                }
                continue;
            }
            if ($this->closeNotice === null || $this->held) {
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
