<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;
use Kiln\Redis\CommandTimeoutException;
use Kiln\Redis\ConnectException;
use Kiln\Redis\ConnectionLostException;
use Kiln\Redis\ErrorReplyException;
use Kiln\Redis\ProtocolException;
use Kiln\Redis\RedisException;
use Kiln\Redis\Resp\Attributed;
use Kiln\Redis\Resp\ErrorReply;
use Kiln\Redis\Resp\Push;
use Kiln\Redis\Resp\RespEncoder;
use Kiln\Redis\Resp\RespParser;

/**
 * One connection on the loop, shared by any number of Fibers: commands are written in the order they
 * are made (all made in one tick go out in one write), and replies are handed back in that order.
 *
 * A reply nobody waits for (a RESP3 push; in subscribe mode, every message) goes to $onOutOfBand;
 * without one, pushes are dropped and any other unasked-for reply closes the connection (out of step).
 * When the connection breaks, every command in flight fails with ConnectionLostException and nothing
 * is sent again; a command without a reply within the timeout fails with CommandTimeoutException and
 * closes the connection (a late reply could not be told from the next one).
 *
 * @internal
 */
final class Connection
{
    private string $outgoing = '';
    private bool $flushQueued = false;
    private ?string $writeWatcher = null;
    private readonly string $readWatcher;
    private readonly string $watchdog;
    private readonly ReplyWaiters $pending;
    private ?RedisException $closedBy = null;
    private readonly \Closure $flush;

    /**
     * @param resource $stream connected (and TLS-ready), non-blocking
     * @param (\Closure(mixed): void)|null $onOutOfBand
     * @param (\Closure(self): void)|null $onClose
     */
    public function __construct(
        private readonly mixed $stream,
        private readonly string $peer,
        private readonly float $commandTimeout,
        private readonly RespParser $parser = new RespParser(),
        private ?\Closure $onOutOfBand = null,
        private ?\Closure $onClose = null,
    ) {
        $this->pending = new ReplyWaiters();
        $this->flush = $this->flush(...);
        $this->readWatcher = Loop::onReadable($stream, $this->read(...));
        Loop::unreference($this->readWatcher);
        $this->watchdog = Loop::repeat(min(0.5, max(0.01, $commandTimeout / 4)), $this->checkDeadline(...));
        Loop::unreference($this->watchdog);
    }

    public function peer(): string
    {
        return $this->peer;
    }

    public function isOpen(): bool
    {
        return $this->closedBy === null;
    }

    public function inFlight(): int
    {
        return $this->pending->count();
    }

    /**
     * Sends one command and suspends until its reply.
     *
     * @param array<array-key, string|int|float> $args
     * @param float $extraTime added to the command timeout (blocking commands: BLPOP, XREADGROUP BLOCK)
     *
     * @throws ErrorReplyException|ConnectionLostException|CommandTimeoutException
     */
    public function command(array $args, float $extraTime = 0.0): mixed
    {
        if ($this->closedBy !== null) {
            $this->ensureOpen();
        }
        // The hot path: a Fiber waits on itself (resumed from the read callback, on the loop's stack);
        // only {main} needs a Suspension, which runs the loop while it waits.
        $fiber = \Fiber::getCurrent();
        $waiter = $fiber ?? Loop::getSuspension();
        if ($this->pending->isEmpty()) {
            Loop::reference($this->readWatcher);
        }
        $this->outgoing .= RespEncoder::command($args);
        $this->pending->add($waiter, Loop::now() + $this->commandTimeout + $extraTime);
        if (!$this->flushQueued && $this->writeWatcher === null) {
            $this->flushQueued = true;
            Loop::defer($this->flush);
        }
        $reply = $waiter instanceof Suspension ? $waiter->suspend() : \Fiber::suspend();
        if ($reply instanceof ErrorReply) {
            throw new ErrorReplyException($reply);
        }

        return $reply;
    }

    /**
     * Sends the commands in one write and suspends until all replies are in; error replies are
     * returned as ErrorReply values, in their place.
     *
     * @param list<array<array-key, string|int|float>> $commands
     * @param float|null $timeout instead of the command timeout (the greeting takes the connect timeout)
     *
     * @return list<mixed>
     *
     * @throws ConnectionLostException|CommandTimeoutException
     */
    public function pipeline(array $commands, ?float $timeout = null): array
    {
        if ($commands === []) {
            return [];
        }
        $suspension = Loop::getSuspension();
        $replies = [];
        $left = \count($commands);
        $failed = false;
        $this->enqueue($commands, static function (mixed $value, ?\Throwable $error) use ($suspension, &$replies, &$left, &$failed): void {
            if ($failed) {
                return;
            }
            if ($error !== null) {
                $failed = true;
                $suspension->throw($error);

                return;
            }
            $replies[] = $value;
            if (--$left === 0) {
                $suspension->resume();
            }
        }, $timeout === null ? 0.0 : $timeout - $this->commandTimeout);
        $suspension->suspend();

        return $replies;
    }

    /**
     * Writes a command whose replies arrive out of band (SUBSCRIBE and friends in subscribe mode).
     *
     * @param array<array-key, string|int|float> $args
     */
    public function write(array $args): void
    {
        $this->ensureOpen();
        $this->outgoing .= RespEncoder::command($args);
        $this->queueFlush();
    }

    /** Closes the connection; commands in flight fail with $reason (the first one with $first, if given). */
    public function close(RedisException $reason, ?RedisException $first = null): void
    {
        if ($this->closedBy !== null) {
            return;
        }
        $this->closedBy = $reason;
        Loop::cancel($this->readWatcher);
        Loop::cancel($this->watchdog);
        if ($this->writeWatcher !== null) {
            Loop::cancel($this->writeWatcher);
        }
        if (\is_resource($this->stream)) {
            fclose($this->stream);
        }
        $this->outgoing = '';
        $this->pending->failAll($reason, $first);
        $onClose = $this->onClose;
        $this->onClose = null;
        $this->onOutOfBand = null;
        if ($onClose !== null) {
            $onClose($this);
        }
    }

    /**
     * @param non-empty-list<array<array-key, string|int|float>> $commands
     * @param \Closure(mixed, ?\Throwable): void $settle
     */
    private function enqueue(array $commands, \Closure $settle, float $extraTime = 0.0): void
    {
        $this->ensureOpen();
        $deadline = Loop::now() + $this->commandTimeout + $extraTime;
        if ($this->pending->isEmpty()) {
            Loop::reference($this->readWatcher);
        }
        foreach ($commands as $args) {
            $this->outgoing .= RespEncoder::command($args);
            $this->pending->add($settle, $deadline);
        }
        $this->queueFlush();
    }

    /** A closed connection takes no command: it was not sent, so ConnectException. */
    private function ensureOpen(): void
    {
        if ($this->closedBy !== null) {
            throw new ConnectException("The connection to Redis at {$this->peer} is closed ({$this->closedBy->getMessage()}); the command was not sent", 0, $this->closedBy);
        }
    }

    private function queueFlush(): void
    {
        if (!$this->flushQueued && $this->writeWatcher === null) {
            $this->flushQueued = true;
            Loop::defer($this->flush);
        }
    }

    private function flush(): void
    {
        $this->flushQueued = false;
        if ($this->closedBy !== null || $this->outgoing === '') {
            return;
        }
        $written = @fwrite($this->stream, $this->outgoing);
        if ($written === false) {
            $this->close(new ConnectionLostException("Writing to Redis at {$this->peer} failed: " . (error_get_last()['message'] ?? 'unknown error')));

            return;
        }
        $this->outgoing = (string) substr($this->outgoing, $written);
        if ($this->outgoing !== '' && $this->writeWatcher === null) {
            $this->writeWatcher = Loop::onWritable($this->stream, function (): void {
                $this->flush();
                if ($this->outgoing === '' && $this->writeWatcher !== null) {
                    Loop::cancel($this->writeWatcher);
                    $this->writeWatcher = null;
                }
            });
        }
    }

    private function read(): void
    {
        $data = @fread($this->stream, 65536);
        if ($data === false || ($data === '' && feof($this->stream))) {
            $this->close(new ConnectionLostException("Redis at {$this->peer} closed the connection"));

            return;
        }
        if ($data === '') {
            return;
        }
        try {
            $values = $this->parser->feed($data);
        } catch (ProtocolException $e) {
            $this->close(new ConnectionLostException("Redis at {$this->peer} sent malformed data: {$e->getMessage()}", 0, $e));

            return;
        }
        foreach ($values as $value) {
            if ($value instanceof Attributed) {
                $value = $value->value;
            }
            if ($value instanceof Push || $this->pending->isEmpty()) {
                $handler = $this->onOutOfBand;
                if ($handler !== null) {
                    $handler($value);
                } elseif (!$value instanceof Push) {
                    $this->close(new ConnectionLostException("Redis at {$this->peer} sent a reply nobody asked for"));

                    return;
                }
                continue;
            }
            if ($this->pending->count() === 1) {
                Loop::unreference($this->readWatcher);
            }
            $this->pending->resolveOldest($value);
            if ($this->closedBy !== null) {
                return;
            }
        }
    }

    private function checkDeadline(): void
    {
        $deadline = $this->pending->oldestDeadline();
        if ($deadline === null || $deadline > Loop::now()) {
            return;
        }
        $this->close(
            new ConnectionLostException("The connection to Redis at {$this->peer} was closed: an earlier command timed out"),
            new CommandTimeoutException("Redis at {$this->peer} did not reply within {$this->commandTimeout} s"),
        );
    }
}
