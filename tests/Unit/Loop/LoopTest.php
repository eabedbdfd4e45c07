<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use function Kiln\Loop\delay;

use Kiln\Loop\Driver\EpollDriver;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Internal\FiberPool;
use Kiln\Loop\Loop;

final class LoopTest extends LoopTestCase
{
    public function testCreateDriverPicksSelectWhileConnectionsFitAndEpollBeyond(): void
    {
        self::assertInstanceOf(SelectDriver::class, Loop::createDriver(100));
        $big = Loop::createDriver(5000);
        self::assertTrue(EpollDriver::isSupported(), 'epoll through FFI: scripts/install-deps.sh installs php-ffi');
        self::assertInstanceOf(EpollDriver::class, $big);
    }

    public function testAsyncStartsTheJobAtOnceUntilItsFirstSuspension(): void
    {
        $steps = [];
        Loop::async(static function () use (&$steps): void {
            $steps[] = 'started';
            delay(0.001);
            $steps[] = 'resumed';
        });
        $steps[] = 'returned';
        $this->runGuarded();
        self::assertSame(['started', 'returned', 'resumed'], $steps);
    }

    public function testTheFiberPoolReusesTheSameFiberAcrossJobs(): void
    {
        $pool = new FiberPool(static fn(\Throwable $e) => throw $e);
        $fibers = [];
        for ($i = 0; $i < 3; $i++) {
            $pool->run(static function () use (&$fibers): void {
                $fibers[] = \Fiber::getCurrent();
            });
        }
        self::assertCount(3, $fibers);
        self::assertSame($fibers[0], $fibers[1]);
        self::assertSame($fibers[0], $fibers[2]);
        self::assertSame(1, $pool->createdCount());
        self::assertSame(1, $pool->idleCount());
    }

    public function testTheIdlePoolIsCapped(): void
    {
        $pool = new FiberPool(static fn(\Throwable $e) => throw $e, 2);
        $suspensions = [];
        for ($i = 0; $i < 4; $i++) {
            $pool->run(static function () use (&$suspensions): void {
                $suspensions[] = Loop::getSuspension();
                \end($suspensions)->suspend();
            });
        }
        foreach ($suspensions as $suspension) {
            $suspension->resume();
        }
        self::assertSame(2, $pool->idleCount());
        self::assertSame(4, $pool->createdCount());
    }

    public function testAnExceptionFromAJobIsRethrownFromRunWithoutAHandler(): void
    {
        Loop::async(static fn() => throw new \DomainException('job failed'));
        $this->expectException(\DomainException::class);
        $this->runGuarded();
    }

    public function testAnExceptionFromAJobGoesToTheErrorHandlerAndTheFiberIsReused(): void
    {
        $errors = [];
        Loop::setErrorHandler(static function (\Throwable $e) use (&$errors): void {
            $errors[] = $e->getMessage();
        });
        $fibers = [];
        for ($i = 0; $i < 2; $i++) {
            Loop::async(static function () use (&$fibers, $i): void {
                $fibers[] = \Fiber::getCurrent();
                delay(0);
                throw new \RuntimeException("fail $i");
            });
        }
        $this->runGuarded();
        self::assertSame(['fail 0', 'fail 1'], $errors);
        $again = null;
        Loop::async(static function () use (&$again): void {
            $again = \Fiber::getCurrent();
        });
        self::assertContains($again, $fibers);
    }
}
