<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

use Kiln\Loop\Loop;

/** For a TestCase whose cases run on Kiln's loop: a case in a Fiber, with a guard against a loop that never ends. */
trait GuardedLoop
{
    /**
     * Runs $test in a Fiber on the loop and returns what it returned, or throws what it threw; fails if the
     * loop is still busy after $guard seconds, or stopped before the Fiber finished.
     *
     * @template T
     *
     * @param \Closure(): T $test
     *
     * @return T
     */
    protected function runGuarded(\Closure $test, float $guard): mixed
    {
        $result = null;
        $error = null;
        $finished = false;
        Loop::async(static function () use ($test, &$result, &$error, &$finished): void {
            try {
                $result = $test();
            } catch (\Throwable $e) {
                $error = $e;
            }
            $finished = true;
        });
        $timedOut = false;
        $timer = Loop::delay($guard, static function () use (&$timedOut): void {
            $timedOut = true;
            Loop::stop();
        });
        Loop::unreference($timer);
        Loop::run();
        Loop::cancel($timer);
        if ($error !== null) {
            throw $error;
        }
        self::assertFalse($timedOut, "The test did not finish within the {$guard} s guard");
        self::assertTrue($finished, 'The loop stopped before the test Fiber finished');

        /** @var T $result */
        return $result;
    }
}
