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

/**
 * Runs $fn(...$args) in a pooled Fiber, at once until its first suspension, and returns a Future of
 * its return value or exception. If the Future fails and is destroyed without its error ever being
 * observed (await(), a combinator, Future::ignore()), the error is reported as UnhandledFutureError
 * to Loop's error handler (without one, thrown out of Loop::run(), like any uncaught job exception).
 *
 * @template T
 *
 * @param \Closure(): T $fn typed for the common no-argument case; $args are passed positionally
 *
 * @return Future<T>
 */
function async(\Closure $fn, mixed ...$args): Future
{
    /** @var Internal\FutureState<T> $state */
    $state = new Internal\FutureState(reportUnhandled: true);
    Loop::async(static function () use ($state, $fn, $args): void {
        try {
            $value = $fn(...$args);
        } catch (\Throwable $error) {
            $state->error($error);

            return;
        }
        $state->complete($value);
    });

    return new Future($state);
}

/**
 * @template T
 *
 * @param Future<T> $future
 *
 * @return T
 */
function await(Future $future, ?Cancellation $cancellation = null): mixed
{
    return $future->await($cancellation);
}

/**
 * Waits for every Future; the values keep the keys and order of $futures. The first error is thrown
 * at once (the other Futures keep running). E.g. all($futures, new TimeoutCancellation(2.0)).
 *
 * @template K of array-key
 * @template V
 *
 * @param iterable<K, Future<V>> $futures
 *
 * @return array<K, V>
 */
function all(iterable $futures, ?Cancellation $cancellation = null): array
{
    return Internal\Combinator::all($futures, $cancellation);
}

/**
 * The value of the first Future to succeed; errors are ignored unless all fail (CompositeException).
 *
 * @template V
 *
 * @param iterable<array-key, Future<V>> $futures non-empty
 *
 * @return V
 *
 * @throws CompositeException
 */
function any(iterable $futures, ?Cancellation $cancellation = null): mixed
{
    $values = Internal\Combinator::some($futures, 1, $cancellation);

    return $values[\array_key_first($values)];
}

/**
 * The values of the first $count Futures to succeed (keys kept, in completion order); CompositeException
 * as soon as so many have failed that $count successes are impossible.
 *
 * @template K of array-key
 * @template V
 *
 * @param iterable<K, Future<V>> $futures
 *
 * @return array<K, V>
 *
 * @throws CompositeException
 */
function some(iterable $futures, int $count, ?Cancellation $cancellation = null): array
{
    return Internal\Combinator::some($futures, $count, $cancellation);
}

/**
 * The outcome of the first Future to complete: its value, or its error thrown.
 *
 * @template V
 *
 * @param iterable<array-key, Future<V>> $futures non-empty
 *
 * @return V
 */
function race(iterable $futures, ?Cancellation $cancellation = null): mixed
{
    return Internal\Combinator::race($futures, $cancellation);
}

/**
 * Reads one chunk of at most $max bytes, suspending until data is there; null at end of stream.
 *
 * @param resource $stream
 *
 * @throws StreamException|CancelledException
 */
function read(mixed $stream, int $max = 65536, ?Cancellation $cancellation = null): ?string
{
    return Internal\StreamIo::read($stream, $max, $cancellation);
}

/**
 * Reads until end of stream.
 *
 * @param resource $stream
 *
 * @throws StreamException|CancelledException
 */
function readAll(mixed $stream, ?Cancellation $cancellation = null): string
{
    return Internal\StreamIo::readAll($stream, $cancellation);
}

/**
 * Reads one line without its "\n" or "\r\n"; the last line may lack one; null at end of stream.
 *
 * @param resource $stream
 *
 * @throws StreamException also when the line exceeds $maxLength bytes
 * @throws CancelledException
 */
function readLine(mixed $stream, ?Cancellation $cancellation = null, int $maxLength = 65536): ?string
{
    return Internal\StreamIo::readLine($stream, $maxLength, $cancellation);
}

/**
 * Writes all of $data, suspending while the stream is full.
 *
 * @param resource $stream
 *
 * @throws StreamException|CancelledException
 */
function write(mixed $stream, string $data, ?Cancellation $cancellation = null): void
{
    Internal\StreamIo::write($stream, $data, $cancellation);
}
