<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\Driver;

/** @property Driver $loop */
trait DriverHelpers
{
    /** Runs the loop with a guard timer that stops it and fails the test if it is still running after $seconds. */
    protected function runGuarded(float $seconds = 2.0): void
    {
        $timedOut = false;
        $guard = $this->loop->delay($seconds, function () use (&$timedOut): void {
            $timedOut = true;
            $this->loop->stop();
        });
        $this->loop->unreference($guard);
        try {
            $this->loop->run();
        } finally {
            $this->loop->cancel($guard);
        }
        self::assertFalse($timedOut, 'The loop did not finish before the guard timer');
    }

    /** @return array{resource, resource} */
    protected static function pair(): array
    {
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        self::assertIsArray($pair);
        \stream_set_blocking($pair[0], false);
        \stream_set_blocking($pair[1], false);

        return $pair;
    }
}
