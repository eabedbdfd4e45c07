<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Redis;

use function Kiln\Loop\async;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutCancellation;
use PHPUnit\Framework\TestCase;

/** Runs each test body in a Fiber on a fresh loop, under a guard timeout. */
abstract class RedisTestCase extends TestCase
{
    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
    }

    /**
     * @template T
     *
     * @param \Closure(): T $body
     *
     * @return T
     */
    protected static function inLoop(\Closure $body, float $timeout = 30.0): mixed
    {
        return async($body)->await(new TimeoutCancellation($timeout, "The test body did not finish within $timeout s"));
    }

    /**
     * Calls $attempt until it returns without throwing, sleeping on the loop between tries.
     *
     * @template T
     *
     * @param \Closure(): T $attempt
     *
     * @return T
     */
    protected static function eventually(\Closure $attempt, float $timeout = 10.0): mixed
    {
        $deadline = microtime(true) + $timeout;
        while (true) {
            try {
                return $attempt();
            } catch (\Throwable $e) {
                if (microtime(true) > $deadline) {
                    throw $e;
                }
                \Kiln\Loop\delay(0.05);
            }
        }
    }
}
