<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Loop\Loop;
use Kiln\Loop\StreamPoll;

/**
 * A worker's end of the node bus socket (the supervisor's end is BusRelay): sends frames without blocking
 * the loop, through a bounded queue flushed once per loop turn, and hands the frames that arrive to
 * whoever listens (Kiln\Store\RelayBus); with nobody listening they are read and dropped, so the socket
 * never fills. The worker makes one current when it boots; a process forked from the worker does not
 * inherit it (current() is null there: its writes would interleave with the worker's).
 */
final class RelayLink
{
    /** Bytes waiting for the supervisor at most: 32 MiB. */
    public const QUEUE_LIMIT = 32 << 20;

    /** How long a process ending waits for its last frames to go out. */
    private const EXIT_FLUSH = 2.0;

    private static ?self $current = null;

    private readonly RelayFrames $frames;

    private readonly WriteQueue $queue;

    private readonly int $pid;

    /** @var (\Closure(list<string>): void)|null */
    private ?\Closure $receiver = null;

    private ?string $reader = null;

    private ?string $writer = null;

    private bool $flushScheduled = false;

    private ?string $closedBecause = null;

    private readonly \Closure $flush;

    /** @param resource $stream */
    public function __construct(
        private readonly mixed $stream,
        int $queueLimit = self::QUEUE_LIMIT,
        private readonly int $maxBody = RelayFrames::MAX_BODY,
    ) {
        $this->frames = new RelayFrames($maxBody);
        if ($maxBody + RelayFrames::HEADER > $queueLimit) {
            throw new \ValueError('The queue of a relay link must hold at least one frame of the largest body');
        }
        $this->queue = new WriteQueue($queueLimit);
        $this->pid = getmypid() ?: 0;
        $this->flush = $this->flush(...);
    }

    /** The link of this worker process; null outside a worker and in a process forked from one. */
    public static function current(): ?self
    {
        $link = self::$current;
        return $link !== null && $link->pid === getmypid() ? $link : null;
    }

    /** @internal the worker, at boot */
    public function makeCurrent(): void
    {
        self::$current = $this;
    }

    /** Starts reading (the loop must exist). Frames still queued when the process ends are written then. */
    public function start(): void
    {
        if ($this->reader !== null) {
            return;
        }
        stream_set_blocking($this->stream, false);
        $this->reader = Loop::onReadable($this->stream, $this->read(...));
        Loop::unreference($this->reader);
        register_shutdown_function($this->flushAtExit(...));
    }

    /** @param (\Closure(list<string> $bodies): void)|null $receiver called from the loop with the bodies of the frames that arrived */
    public function receive(?\Closure $receiver): void
    {
        $this->receiver = $receiver;
    }

    /**
     * Queues one frame for every other worker of the node.
     *
     * @throws ServerException when the link is closed, its queue is full or $body is over the frame bound (nothing was queued)
     */
    public function send(string $body): void
    {
        if ($this->closedBecause !== null) {
            throw new ServerException("The node bus is closed ({$this->closedBecause})");
        }
        if (\strlen($body) > $this->maxBody) {
            throw new ServerException(\sprintf('A bus message of %d bytes is over the bound of %d', \strlen($body), $this->maxBody));
        }
        if ($this->queue->size() + RelayFrames::HEADER + \strlen($body) > $this->queue->limit || !$this->queue->push(RelayFrames::encode($body))) {
            throw new ServerException(\sprintf('The node bus queue is full: %d bytes wait for the supervisor (limit %d)', $this->queue->size(), $this->queue->limit));
        }
        if (!$this->flushScheduled && $this->writer === null) {
            $this->flushScheduled = true;
            Loop::defer($this->flush);
        }
    }

    public function isOpen(): bool
    {
        return $this->closedBecause === null;
    }

    /** Bytes queued and not yet written. */
    public function queued(): int
    {
        return $this->queue->size();
    }

    public function close(string $why = 'closed'): void
    {
        if ($this->closedBecause !== null) {
            return;
        }
        $this->closedBecause = $why;
        foreach ([$this->reader, $this->writer] as $id) {
            $id !== null && Loop::cancel($id);
        }
        $this->reader = $this->writer = null;
    }

    private function flush(): void
    {
        $this->flushScheduled = false;
        if ($this->closedBecause !== null) {
            return;
        }
        if (!$this->queue->writeTo($this->stream)) {
            $this->close('the supervisor is gone');
            return;
        }
        if ($this->queue->isEmpty()) {
            if ($this->writer !== null) {
                Loop::cancel($this->writer);
                $this->writer = null;
            }
        } elseif ($this->writer === null) {
            $this->writer = Loop::onWritable($this->stream, fn() => $this->flush());
            Loop::unreference($this->writer);
        }
    }

    private function read(): void
    {
        $bodies = [];
        for ($reads = 0; $reads < 16; $reads++) {
            $data = @fread($this->stream, 262144);
            if ($data === false || $data === '') {
                if ($data === false || feof($this->stream)) {
                    $this->close('the supervisor is gone');
                }
                break;
            }
            try {
                array_push($bodies, ...$this->frames->feed($data));
            } catch (ServerException $e) {
                $this->close($e->getMessage());
                break;
            }
        }
        if ($bodies !== [] && $this->receiver !== null) {
            ($this->receiver)($bodies);
        }
    }

    private function flushAtExit(): void
    {
        if ($this->pid !== getmypid() || $this->closedBecause !== null || $this->queue->size() === 0) {
            return;
        }
        $deadline = microtime(true) + self::EXIT_FLUSH;
        $poll = new StreamPoll(); // the link's descriptor may be past stream_select()'s 1024 (inherited ones below it)
        while (($left = $deadline - microtime(true)) > 0) {
            if ($poll->wait([], [$this->stream], min($left, 0.1)) === null) {
                continue;
            }
            if (!$this->queue->writeTo($this->stream) || $this->queue->isEmpty()) {
                return;
            }
        }
    }
}
