<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Http\Internal\Output;
use Kiln\Loop\Loop;

/**
 * Responses finished during one turn of the loop leave together, just before the loop waits again, instead
 * of one write each as they finish.
 *
 * Requests that arrive together (the connections one poll reports ready) are served one after the other in a
 * worker. Writing each response as it finishes wakes the client once per response, and on a loaded machine
 * that wake-up (a context switch, often an interrupt to another CPU) costs the server more kernel time than
 * the write itself. Written back to back, one wake-up serves the whole batch: on this project's 2-core
 * machine, kernel time per request halves for a small response (docs/design/011-write-batch.md).
 *
 * What a response may wait for is bounded:
 * - the batch leaves at the end of the loop turn (a Loop::queue() callback queued with its first response), before
 *   any poll, timer wait or idle time;
 * - a response of WriteBatch::LARGE bytes or more (a file, a large page), and a 101 before a WebSocket
 *   takes the socket over, are written at once;
 * - a response queued, or a streamed one growing, more than the hold (Limits::$responseHold, 1 ms by
 *   default) after the batch opened sends the batch at once;
 * - code about to do something slow calls flush() first (the sequential tier does before a script that
 *   took 1 ms or more the last time, or that it has not run yet), so a slow script never holds back the
 *   responses finished before it;
 * - a worker that ends (exit(), a fatal error, a stop or a drain) sends what is queued first.
 *
 * A response's bytes stay in its connection's output queue until then (Output::pending() counts them, so
 * idle and drain checks wait for them).
 *
 * Each HTTP server owns one batch (made as it starts, with its hold) and hands it to its connections; a
 * handler reaches the batch its response will leave with through Request::writeBatch().
 *
 * @api
 */
final class WriteBatch
{
    /** Bytes from which a response is written at once: its client is bound by bandwidth, not by wake-ups. */
    public const LARGE = 65536;

    /** @var list<Output> outputs with bytes queued and no write attempted yet */
    private array $queued = [];

    /** When the batch's first response was queued (hrtime, ns). */
    private int $since = 0;

    /** How long a batch may be held open for more responses (ns). */
    private readonly int $holdNs;

    /** Queued with the batch's first response: writes the batch at the end of the loop turn. */
    private readonly \Closure $flusher;

    /** @param float $hold seconds a batch may be held open for more responses (Limits::$responseHold) */
    public function __construct(float $hold = 0.001)
    {
        $this->holdNs = max(0, (int) round($hold * 1e9));
        $this->flusher = $this->flush(...);
    }

    /** Queues an output whose queue was empty; it is flushed with the batch. */
    public function add(Output $output): void
    {
        if ($this->queued === []) {
            $this->queued[] = $output;
            $this->since = \hrtime(true);
            Loop::queue($this->flusher);
            return;
        }
        $this->queued[] = $output;
        if (\hrtime(true) - $this->since > $this->holdNs) {
            $this->flush();
        }
    }

    /** Whether the batch has been open longer than the hold (a growing response then goes out at once). */
    public function overdue(): bool
    {
        return $this->queued !== [] && \hrtime(true) - $this->since > $this->holdNs;
    }

    /** Writes every queued response now (what the kernel does not take waits for the socket to be writable). */
    public function flush(): void
    {
        while ($this->queued !== []) {
            $queued = $this->queued;
            $this->queued = [];
            foreach ($queued as $i => $output) {
                try {
                    $output->send();
                } catch (\Throwable $e) {
                    // The outputs after this one are still queued (they would never be written otherwise).
                    $this->queued = [...\array_slice($queued, $i + 1), ...$this->queued];
                    throw $e;
                }
            }
        }
    }

    /** Responses waiting in the batch (for tests and diagnostics). */
    public function size(): int
    {
        return \count($this->queued);
    }
}
