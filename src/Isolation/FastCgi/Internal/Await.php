<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;

/**
 * Suspends the current Fiber (or runs the loop, in {main}) until an event, a timeout or a cancellation,
 * whichever comes first; the others are then ignored. One timer and one watcher per wait, no extra objects.
 *
 * @internal
 */
final class Await
{
    private function __construct() {}

    /**
     * @template T
     *
     * @param \Closure(\Closure(): bool): T $arm registers the event; the wake closure returns false if the
     *                                      wait was already over (so a pool can pass the turn on)
     * @param \Closure(T): void $disarm unregisters it, always called
     *
     * @return bool true when woken, false when $seconds passed first
     *
     * @throws CancelledException
     */
    public static function event(\Closure $arm, \Closure $disarm, float $seconds, ?Cancellation $cancellation): bool
    {
        $cancellation?->throwIfRequested();
        $suspension = Loop::getSuspension();
        $done = false;
        $token = $arm(static function () use (&$done, $suspension): bool {
            if ($done) {
                return false;
            }
            $done = true;
            $suspension->resume(true);

            return true;
        });
        [$timer, $subscription] = self::bounds($done, $suspension, $seconds, $cancellation);
        try {
            return (bool) $suspension->suspend();
        } finally {
            $done = true;
            $disarm($token);
            self::release($timer, $subscription, $cancellation);
        }
    }

    /**
     * @param resource $stream
     *
     * @throws CancelledException
     */
    public static function stream(mixed $stream, bool $writable, float $seconds, ?Cancellation $cancellation): bool
    {
        // event() inlined: this wait comes once or more per request, and three closures fewer show.
        $cancellation?->throwIfRequested();
        $suspension = Loop::getSuspension();
        $done = false;
        $ready = static function () use (&$done, $suspension): void {
            if (!$done) {
                $done = true;
                $suspension->resume(true);
            }
        };
        $watcher = $writable ? Loop::onWritable($stream, $ready) : Loop::onReadable($stream, $ready);
        [$timer, $subscription] = self::bounds($done, $suspension, $seconds, $cancellation);
        try {
            return (bool) $suspension->suspend();
        } finally {
            $done = true;
            Loop::cancel($watcher);
            self::release($timer, $subscription, $cancellation);
        }
    }

    /**
     * The timer and the cancellation subscription that end a wait, whichever comes first, unless $done.
     *
     * @return array{string, ?string}
     */
    private static function bounds(bool &$done, Suspension $suspension, float $seconds, ?Cancellation $cancellation): array
    {
        $timer = Loop::delay(\max(0.0, $seconds), static function () use (&$done, $suspension): void {
            if (!$done) {
                $done = true;
                $suspension->resume(false);
            }
        });
        $subscription = $cancellation?->subscribe(static function (CancelledException $e) use (&$done, $suspension): void {
            if (!$done) {
                $done = true;
                $suspension->throw($e);
            }
        });
        return [$timer, $subscription];
    }

    private static function release(string $timer, ?string $subscription, ?Cancellation $cancellation): void
    {
        Loop::cancel($timer);
        if ($subscription !== null) {
            $cancellation?->unsubscribe($subscription);
        }
    }
}
