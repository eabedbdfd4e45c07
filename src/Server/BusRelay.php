<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The supervisor's half of the node bus (docs/design/012-node-bus.md): each worker has a socket to the
 * supervisor besides its line channel; every frame a worker writes there is copied, whole and in arrival
 * order, to every other worker attached at that moment, whatever its generation. The publisher delivers
 * to itself; the relay never echoes.
 *
 * Nothing here blocks: frames wait in a bounded queue per worker (WriteQueue) while that worker does not
 * read. A worker whose queue is full loses the frames that do not fit, and the loss is logged (once per
 * second at most, with the count): one stuck worker never stalls the bus for the others, nor grows the
 * supervisor without bound. A worker that writes a frame past the bound is cut off the bus (logged).
 */
final class BusRelay
{
    /** Bytes queued for one worker at most: 32 MiB. */
    public const QUEUE_LIMIT = 32 << 20;

    /** @var array<int, resource> by worker pid */
    private array $streams = [];

    /** @var array<int, RelayFrames> */
    private array $decoders = [];

    /** @var array<int, WriteQueue> */
    private array $queues = [];

    /** @var array<int, int> frames lost per worker since the last log line */
    private array $lost = [];

    private float $loggedAt = 0.0;

    /** Frames relayed, for tests and the status of a node. */
    private int $relayed = 0;

    public function __construct(
        private readonly Log $log,
        private readonly int $queueLimit = self::QUEUE_LIMIT,
        private readonly int $maxBody = RelayFrames::MAX_BODY,
    ) {}

    /** @param resource $stream the supervisor's end of a new worker's bus socket */
    public function attach(int $pid, mixed $stream): void
    {
        stream_set_blocking($stream, false);
        $this->streams[$pid] = $stream;
        $this->decoders[$pid] = new RelayFrames($this->maxBody);
        $this->queues[$pid] = new WriteQueue($this->queueLimit);
    }

    /** The worker is gone (reaped, or its socket broke): what was queued for it is dropped with it. */
    public function detach(int $pid): void
    {
        if (isset($this->streams[$pid])) {
            @fclose($this->streams[$pid]);
        }
        unset($this->streams[$pid], $this->decoders[$pid], $this->queues[$pid]);
    }

    /** In a forked worker: the supervisor's ends are not its own; close them all. */
    public function forget(): void
    {
        foreach (array_keys($this->streams) as $pid) {
            $this->detach($pid);
        }
        $this->lost = [];
    }

    /** @return array<int, resource> by pid, every attached stream (to select for reading) */
    public function readable(): array
    {
        return $this->streams;
    }

    /** @return array<int, resource> by pid, the streams with bytes waiting (to select for writing) */
    public function writable(): array
    {
        $streams = [];
        foreach ($this->queues as $pid => $queue) {
            if (!$queue->isEmpty()) {
                $streams[$pid] = $this->streams[$pid];
            }
        }
        return $streams;
    }

    /** Reads what worker $pid wrote and relays its whole frames. */
    public function read(int $pid): void
    {
        $stream = $this->streams[$pid] ?? null;
        if ($stream === null) {
            return;
        }
        for ($reads = 0; $reads < 16; $reads++) {
            $data = @fread($stream, 262144);
            if ($data === false || $data === '') {
                if ($data === false || feof($stream)) {
                    $this->detach($pid);
                }
                break;
            }
            try {
                $bodies = $this->decoders[$pid]->feed($data);
            } catch (ServerException $e) {
                $this->log->error("worker pid $pid is cut off the node bus: {$e->getMessage()}");
                $this->detach($pid);
                break;
            }
            if ($bodies !== []) {
                $this->relay($pid, $bodies);
            }
        }
        $this->flush();
    }

    /** Writes what each worker's socket takes now. */
    public function flush(): void
    {
        foreach ($this->queues as $pid => $queue) {
            if (!$queue->isEmpty() && !$queue->writeTo($this->streams[$pid])) {
                $this->detach($pid);
            }
        }
        if ($this->lost !== [] && microtime(true) - $this->loggedAt >= 1.0) {
            $this->loggedAt = microtime(true);
            foreach ($this->lost as $pid => $count) {
                $this->log->error("node bus: $count message(s) lost for worker pid $pid: it does not read them "
                    . "(more than {$this->queueLimit} bytes waiting)");
            }
            $this->lost = [];
        }
    }

    public function relayed(): int
    {
        return $this->relayed;
    }

    /** @param list<string> $bodies */
    private function relay(int $from, array $bodies): void
    {
        foreach ($bodies as $body) {
            $frame = RelayFrames::encode($body);
            foreach ($this->queues as $pid => $queue) {
                if ($pid !== $from && !$queue->push($frame)) {
                    $this->lost[$pid] = ($this->lost[$pid] ?? 0) + 1;
                }
            }
            $this->relayed++;
        }
    }
}
