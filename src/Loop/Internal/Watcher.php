<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

/**
 * One registration in a driver. Mutable on purpose: the driver flips flags on the hot path.
 *
 * @internal
 */
final class Watcher
{
    /** The longest delay or interval kept as given (seconds); a longer one is this long. */
    private const LONGEST = 3.0e9;

    public bool $enabled = true;
    public bool $referenced = true;
    /** Due time in hrtime nanoseconds (timers only). */
    public int $expiration = 0;
    /** Token of this watcher's live entry in the TimerQueue; 0 when it has none. */
    public int $timerSeq = 0;
    /** A readable watcher on a stream whose PHP read buffer is off (Driver::onReadableUnbuffered()). */
    public bool $unbuffered = false;

    /**
     * @param \Closure $callback called as (id, stream) for I/O, (id) for timers/defers, (id, signo) for signals
     * @param resource|null $stream
     * @param int $key (int) $stream for I/O, the signal number for signals
     * @param int $interval nanoseconds, timers only
     */
    public function __construct(
        public readonly string $id,
        public readonly WatcherType $type,
        public readonly \Closure $callback,
        public readonly mixed $stream = null,
        public readonly int $key = 0,
        public readonly int $interval = 0,
    ) {}

    public static function io(string $id, WatcherType $type, \Closure $callback, mixed $stream): self
    {
        if (!\is_resource($stream) || \get_resource_type($stream) !== 'stream') {
            throw new \TypeError('Expected an open stream resource, got ' . \get_debug_type($stream));
        }

        return new self($id, $type, $callback, $stream, (int) $stream);
    }

    public static function timer(string $id, WatcherType $type, \Closure $callback, float $seconds): self
    {
        if ($seconds < 0 || \is_nan($seconds)) {
            throw new \ValueError('A delay or interval must be >= 0 seconds, got ' . $seconds);
        }

        // Past about 95 years a delay is as good as never, and its nanoseconds still fit in an int (INF included).
        return new self($id, $type, $callback, null, 0, (int) \ceil(\min($seconds, self::LONGEST) * 1e9));
    }
}
