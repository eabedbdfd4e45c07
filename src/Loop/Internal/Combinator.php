<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\CompositeException;
use Kiln\Loop\Future;
use Kiln\Loop\Loop;

/**
 * The combinators behind all(), any(), some() and race(). Every Future passed in counts as observed
 * (its error is never reported as unhandled), whether or not the combinator needed its result.
 * A requested Cancellation ends the wait with its CancelledException; the Futures are unaffected.
 *
 * @internal
 */
final class Combinator
{
    /**
     * @template K of array-key
     * @template V
     *
     * @param iterable<K, Future<V>> $futures
     *
     * @return array<K, V> in the order of $futures
     */
    public static function all(iterable $futures, ?Cancellation $cancellation): array
    {
        $futures = self::collect($futures);
        $values = [];
        self::wait($futures, $cancellation, static function (int|string $key, ?\Throwable $error, mixed $value) use (&$values, $futures): bool {
            if ($error !== null) {
                throw $error;
            }
            $values[$key] = $value;

            return \count($values) === \count($futures);
        });
        $ordered = [];
        foreach ($futures as $key => $_) {
            $ordered[$key] = $values[$key];
        }

        /** @var array<K, V> $ordered */
        return $ordered;
    }

    /**
     * @template K of array-key
     * @template V
     *
     * @param iterable<K, Future<V>> $futures
     *
     * @return array<K, V> the first $count values, in the order they completed
     *
     * @throws CompositeException once so many failed that $count successes are out of reach
     */
    public static function some(iterable $futures, int $count, ?Cancellation $cancellation): array
    {
        $futures = self::collect($futures);
        if ($count < 1 || $count > \count($futures)) {
            throw new \ValueError("some() needs 1 <= count <= the number of futures (" . \count($futures) . "), got $count");
        }
        $values = [];
        $errors = [];
        $total = \count($futures);
        self::wait($futures, $cancellation, static function (int|string $key, ?\Throwable $error, mixed $value) use (&$values, &$errors, $count, $total): bool {
            if ($error === null) {
                $values[$key] = $value;

                return \count($values) === $count;
            }
            $errors[$key] = $error;
            if ($total - \count($errors) < $count) {
                throw new CompositeException($errors, \count($errors) . " of $total operation(s) failed, $count success(es) needed");
            }

            return false;
        });

        /** @var array<K, V> $values */
        return $values;
    }

    /**
     * @template V
     *
     * @param iterable<array-key, Future<V>> $futures
     *
     * @return V
     */
    public static function race(iterable $futures, ?Cancellation $cancellation): mixed
    {
        $futures = self::collect($futures);
        if ($futures === []) {
            throw new \ValueError('race() needs at least one future');
        }
        $result = null;
        self::wait($futures, $cancellation, static function (int|string $key, ?\Throwable $error, mixed $value) use (&$result): bool {
            if ($error !== null) {
                throw $error;
            }
            $result = $value;

            return true;
        });

        /** @var V $result */
        return $result;
    }

    /**
     * @param array<array-key, Future<mixed>> $futures
     * @param \Closure(int|string, ?\Throwable, mixed): bool $onSettle true: done; a throw: fail with it
     */
    private static function wait(array $futures, ?Cancellation $cancellation, \Closure $onSettle): void
    {
        if ($futures === []) {
            return;
        }
        $cancellation?->throwIfRequested();
        foreach ($futures as $future) {
            $future->ignore();
        }
        $suspension = Loop::getSuspension();
        $done = false;
        $ids = [];
        foreach ($futures as $key => $future) {
            $ids[$key] = $future->state()->subscribe(static function (?\Throwable $error, mixed $value) use ($key, $onSettle, $suspension, &$done): void {
                if ($done) {
                    return;
                }
                try {
                    $finished = $onSettle($key, $error, $value);
                } catch (\Throwable $failure) {
                    $done = true;
                    $suspension->throw($failure);

                    return;
                }
                if ($finished) {
                    $done = true;
                    $suspension->resume();
                }
            });
            if ($done) {
                break;
            }
        }
        $subscription = $done ? null : $cancellation?->subscribe(static function (CancelledException $e) use ($suspension, &$done): void {
            if (!$done) {
                $done = true;
                $suspension->throw($e);
            }
        });
        try {
            $suspension->suspend();
        } finally {
            $done = true;
            foreach ($ids as $key => $id) {
                $futures[$key]->state()->unsubscribe($id);
            }
            if ($subscription !== null) {
                $cancellation?->unsubscribe($subscription);
            }
        }
    }

    /**
     * @template K of array-key
     * @template V
     *
     * @param iterable<K, Future<V>> $futures
     *
     * @return array<K, Future<V>>
     */
    private static function collect(iterable $futures): array
    {
        $array = [];
        foreach ($futures as $key => $future) {
            if (!$future instanceof Future) {
                throw new \TypeError('Expected only Future instances, got ' . \get_debug_type($future) . " at key $key");
            }
            $array[$key] = $future;
        }

        return $array;
    }
}
