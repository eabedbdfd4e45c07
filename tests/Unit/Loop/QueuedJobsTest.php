<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use function Kiln\Loop\delay;

use Kiln\Loop\Internal\FiberPool;
use Kiln\Loop\Loop;

/** Loop::queueAsync(): jobs that wait for the end of the loop turn, then share one Fiber until one suspends. */
final class QueuedJobsTest extends LoopTestCase
{
    public function testAQueuedJobStartsAtTheEndOfTheTurnAfterWhatWasQueuedBeforeIt(): void
    {
        $steps = [];
        Loop::defer(static function () use (&$steps): void {
            Loop::queue(static function () use (&$steps): void {
                $steps[] = 'queued before';
            });
            Loop::queueAsync(static function () use (&$steps): void {
                $steps[] = 'job';
                Loop::queue(static function () use (&$steps): void {
                    $steps[] = 'queued by the job';
                });
            });
            $steps[] = 'callback returned';
        });
        $this->runGuarded();
        self::assertSame(['callback returned', 'queued before', 'job', 'queued by the job'], $steps);
    }

    public function testTheJobsOfOneTurnRunInOrderInOneFiber(): void
    {
        $pool = new FiberPool(static fn(\Throwable $e) => throw $e);
        $ran = [];
        Loop::defer(static function () use ($pool, &$ran): void {
            for ($i = 0; $i < 5; $i++) {
                $pool->later(static function () use (&$ran, $i): void {
                    $ran[] = [$i, \Fiber::getCurrent()];
                });
            }
            self::assertSame(5, $pool->queuedCount());
            self::assertSame([], $ran); // nothing starts before the turn ends
        });
        $this->runGuarded();
        self::assertSame([0, 1, 2, 3, 4], array_column($ran, 0));
        $fibers = array_column($ran, 1);
        self::assertContainsOnlyInstancesOf(\Fiber::class, $fibers);
        self::assertCount(1, array_unique(array_map(spl_object_id(...), $fibers)));
        self::assertSame(1, $pool->createdCount());
        self::assertSame(0, $pool->queuedCount());
        self::assertSame(1, $pool->idleCount());
    }

    public function testAJobThatSuspendsLeavesTheRestOfTheQueueToAnotherFiberAtOnce(): void
    {
        $pool = new FiberPool(static fn(\Throwable $e) => throw $e);
        $steps = [];
        $fibers = [];
        Loop::defer(static function () use ($pool, &$steps, &$fibers): void {
            $pool->later(static function () use (&$steps, &$fibers): void {
                $fibers['slow'] = \Fiber::getCurrent();
                $steps[] = 'slow starts';
                delay(0.01);
                $steps[] = 'slow ends';
            });
            $pool->later(static function () use (&$steps, &$fibers): void {
                $fibers['next'] = \Fiber::getCurrent();
                $steps[] = 'next';
            });
        });
        $this->runGuarded();
        self::assertSame(['slow starts', 'next', 'slow ends'], $steps);
        self::assertNotSame($fibers['slow'], $fibers['next']);
        self::assertSame(2, $pool->createdCount());
        self::assertSame(2, $pool->idleCount()); // both parked once done
    }

    public function testAFiberResumedAfterItsJobTakesTheJobsQueuedMeanwhile(): void
    {
        $pool = new FiberPool(static fn(\Throwable $e) => throw $e);
        $steps = [];
        $resume = null;
        Loop::defer(static function () use ($pool, &$steps, &$resume): void {
            $pool->later(static function () use (&$steps, &$resume): void {
                $resume = Loop::getSuspension();
                $resume->suspend();
                $steps[] = 'resumed';
            });
        });
        Loop::delay(0.01, static function () use ($pool, &$steps, &$resume): void {
            $pool->later(static function () use (&$steps): void {
                $steps[] = 'queued while suspended';
            });
            \assert($resume !== null);
            $resume->resume(); // from a loop callback: the Fiber continues here, then takes the queued job
            $steps[] = 'resume returned';
        });
        $this->runGuarded();
        self::assertSame(['resumed', 'queued while suspended', 'resume returned'], $steps);
        self::assertSame(1, $pool->createdCount());
    }

    public function testAnExceptionOfAQueuedJobGoesToTheErrorHandlerAndTheQueueGoesOn(): void
    {
        $errors = [];
        Loop::setErrorHandler(static function (\Throwable $e) use (&$errors): void {
            $errors[] = $e->getMessage();
        });
        $ran = [];
        Loop::defer(static function () use (&$ran): void {
            Loop::queueAsync(static fn() => throw new \DomainException('first failed'));
            Loop::queueAsync(static function () use (&$ran): void {
                $ran[] = 'second';
            });
        });
        $this->runGuarded();
        self::assertSame(['first failed'], $errors);
        self::assertSame(['second'], $ran);
    }

    public function testWithoutAnErrorHandlerAQueuedJobsExceptionLeavesRun(): void
    {
        Loop::defer(static fn() => Loop::queueAsync(static fn() => throw new \DomainException('job failed')));
        $this->expectException(\DomainException::class);
        $this->expectExceptionMessage('job failed');
        $this->runGuarded();
    }

    public function testQueuedJobsKeepTheIdlePoolCapped(): void
    {
        $pool = new FiberPool(static fn(\Throwable $e) => throw $e, 1);
        $suspensions = [];
        Loop::defer(static function () use ($pool, &$suspensions): void {
            for ($i = 0; $i < 3; $i++) {
                $pool->later(static function () use (&$suspensions): void {
                    $suspensions[] = $suspension = Loop::getSuspension();
                    $suspension->suspend();
                });
            }
        });
        Loop::delay(0.01, static function () use (&$suspensions): void {
            foreach ($suspensions as $suspension) {
                $suspension->resume();
            }
        });
        $this->runGuarded();
        self::assertCount(3, $suspensions);
        self::assertSame(3, $pool->createdCount());
        self::assertSame(1, $pool->idleCount());
    }
}
