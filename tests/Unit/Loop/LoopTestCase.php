<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use PHPUnit\Framework\TestCase;

/** Tests of the Loop facade and the primitives: a fresh driver each, every run bounded by a guard. */
abstract class LoopTestCase extends TestCase
{
    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
    }

    protected function runGuarded(float $seconds = 2.0): void
    {
        $timedOut = false;
        $guard = Loop::delay($seconds, static function () use (&$timedOut): void {
            $timedOut = true;
            Loop::stop();
        });
        Loop::unreference($guard);
        try {
            Loop::run();
        } finally {
            Loop::cancel($guard);
        }
        self::assertFalse($timedOut, 'The loop did not finish before the guard timer');
    }
}
