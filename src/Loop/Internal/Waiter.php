<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\Loop;

/**
 * Suspends until one watcher fires, optionally cut short by a Cancellation; whichever comes first
 * wins and the other is ignored.
 *
 * @internal
 */
final class Waiter
{
    /** @param \Closure(\Closure(string): void): string $register registers the watcher, returns its id */
    public static function wait(\Closure $register, ?Cancellation $cancellation): void
    {
        $cancellation?->throwIfRequested();
        $suspension = Loop::getSuspension();
        $done = false;
        $watcher = $register(static function (string $id) use ($suspension, &$done): void {
            Loop::cancel($id); // I/O watchers are level-triggered: fire once
            if (!$done) {
                $done = true;
                $suspension->resume();
            }
        });
        $subscription = $cancellation?->subscribe(static function (CancelledException $e) use ($suspension, $watcher, &$done): void {
            Loop::cancel($watcher);
            if (!$done) {
                $done = true;
                $suspension->throw($e);
            }
        });
        try {
            $suspension->suspend();
        } finally {
            $done = true;
            Loop::cancel($watcher);
            if ($subscription !== null) {
                $cancellation?->unsubscribe($subscription);
            }
        }
    }
}
