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
 * - the batch leaves at the end of the loop turn (a Loop::defer() queued with its first response), before
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
 * @api
 */
final class WriteBatch
{
    /** Bytes from which a response is written at once: its client is bound by bandwidth, not by wake-ups. */
    public const LARGE = 65536;

    /** @var list<Output> outputs with bytes queued and no write attempted yet */
    private static array $queued = [];

    /** When the batch's first response was queued (hrtime, ns). */
    private static int $since = 0;

    /** How long a batch may be held open for more responses (ns). */
    private static int $holdNs = 1_000_000;

    private static ?\Closure $flusher = null;

    /** The hold, in seconds (Limits::$responseHold); set by the server as it starts (one for the process). */
    public static function setHold(float $seconds): void
    {
        self::$holdNs = max(0, (int) round($seconds * 1e9));
    }

    /** Queues an output whose queue was empty; it is flushed with the batch. */
    public static function add(Output $output): void
    {
        if (self::$queued === []) {
            self::$queued[] = $output;
            self::$since = hrtime(true);
            Loop::defer(self::$flusher ??= static function (): void {
                self::flush();
            });
            return;
        }
        self::$queued[] = $output;
        if (hrtime(true) - self::$since > self::$holdNs) {
            self::flush();
        }
    }

    /** Whether the batch has been open longer than the hold (a growing response then goes out at once). */
    public static function overdue(): bool
    {
        return self::$queued !== [] && hrtime(true) - self::$since > self::$holdNs;
    }

    /** Writes every queued response now (what the kernel does not take waits for the socket to be writable). */
    public static function flush(): void
    {
        while (self::$queued !== []) {
            $queued = self::$queued;
            self::$queued = [];
            foreach ($queued as $i => $output) {
                try {
                    $output->send();
                } catch (\Throwable $e) {
                    // The outputs after this one are still queued (they would never be written otherwise).
                    self::$queued = [...\array_slice($queued, $i + 1), ...self::$queued];
                    throw $e;
                }
            }
        }
    }

    /** Responses waiting in the batch (for tests and diagnostics). */
    public static function size(): int
    {
        return \count(self::$queued);
    }
}
