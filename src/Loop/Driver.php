<?php

declare(strict_types=1);

namespace Kiln\Loop;

/**
 * An event loop driver: watches streams, timers and signals and calls back.
 *
 * Contract for every implementation:
 * - Callbacks run on the loop's own stack (never inside a Fiber the driver created); a callback MAY
 *   start or resume Fibers. A callback that throws stops run() and the exception propagates out of it,
 *   after the driver is left in a consistent state (run() MAY be called again).
 * - Every registration returns a string id, unique for the life of the driver. cancel() of an unknown
 *   or already-cancelled id is a no-op. A callback cancelled during the tick MUST NOT run afterwards.
 * - Deferred callbacks run before the next poll for I/O, in the order they were deferred; one deferred
 *   while draining runs in the same tick.
 * - Timers fire no earlier than their delay; timers due at the same time fire in registration order.
 *   A one-shot timer (delay) is cancelled automatically before its callback runs.
 * - Readable/writable watchers are level-triggered: the callback runs every tick while the condition holds.
 *   Several watchers on one stream are allowed; each is called.
 * - Signal watchers are called on the loop's stack, never in the middle of another callback. A signal
 *   received while callbacks run MUST reach its watchers before the I/O callbacks of the next poll.
 * - run() returns when stop() is called, or when nothing is left that is referenced (unreference()
 *   marks a watcher as not keeping the loop alive, e.g. a signal watcher or a housekeeping timer).
 * - now() is a monotonic time in seconds, cached per tick.
 */
interface Driver
{
    /** @param \Closure(string, resource): void $callback */
    public function onReadable(mixed $stream, \Closure $callback): string;

    /**
     * onReadable() for a stream read only with fread() and the like: its PHP read buffer is turned off
     * here (stream_set_read_buffer($stream, 0)), so no data can wait in PHP where polling does not see
     * it and the driver need not look there after each callback. Sockets an HTTP server serves are read so.
     *
     * @param \Closure(string, resource): void $callback
     */
    public function onReadableUnbuffered(mixed $stream, \Closure $callback): string;

    /** @param \Closure(string, resource): void $callback */
    public function onWritable(mixed $stream, \Closure $callback): string;

    /** @param \Closure(string): void $callback */
    public function delay(float $seconds, \Closure $callback): string;

    /** @param \Closure(string): void $callback */
    public function repeat(float $interval, \Closure $callback): string;

    /** @param \Closure(string): void $callback */
    public function defer(\Closure $callback): string;

    /**
     * defer() without a watcher: $callback runs once, in order with the deferred callbacks, and keeps the loop
     * running until then; it cannot be cancelled, disabled or unreferenced. For work queued on every turn (a
     * turn's batch of writes), where a watcher's id and bookkeeping would cost more than the work.
     *
     * @param \Closure(): void $callback
     */
    public function queue(\Closure $callback): void;

    /** @param \Closure(string, int): void $callback */
    public function onSignal(int $signal, \Closure $callback): string;

    /** Temporarily stops a watcher from firing; enable() resumes it. Unknown ids are ignored. */
    public function disable(string $id): void;

    public function enable(string $id): void;

    public function cancel(string $id): void;

    /** The watcher no longer keeps run() from returning. */
    public function unreference(string $id): void;

    public function reference(string $id): void;

    public function run(): void;

    public function stop(): void;

    public function isRunning(): bool;

    public function now(): float;

    /** Highest number of streams this driver can watch safely (select: below FD_SETSIZE). */
    public function capacity(): int;
}
