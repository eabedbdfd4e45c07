<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Internal\Waiter;

/**
 * Suspends the current Fiber (or runs the loop, in {main}) for at least $seconds.
 *
 * @throws CancelledException
 */
function delay(float $seconds, ?Cancellation $cancellation = null): void
{
    Waiter::wait(static fn(\Closure $resume): string => Loop::delay($seconds, $resume), $cancellation);
}

/**
 * Suspends until $stream is readable (data, EOF or error).
 *
 * @param resource $stream
 *
 * @throws CancelledException
 */
function awaitReadable(mixed $stream, ?Cancellation $cancellation = null): void
{
    Waiter::wait(static fn(\Closure $resume): string => Loop::onReadable($stream, $resume), $cancellation);
}

/**
 * Suspends until $stream is writable.
 *
 * @param resource $stream
 *
 * @throws CancelledException
 */
function awaitWritable(mixed $stream, ?Cancellation $cancellation = null): void
{
    Waiter::wait(static fn(\Closure $resume): string => Loop::onWritable($stream, $resume), $cancellation);
}

/**
 * Calls $fn with a Cancellation requested after $seconds; pass it to every wait inside $fn.
 *
 * @template T
 *
 * @param \Closure(Cancellation): T $fn
 *
 * @return T
 *
 * @throws TimeoutException
 */
function timeout(float $seconds, \Closure $fn): mixed
{
    return $fn(new TimeoutCancellation($seconds));
}
