<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\CancelledException;
use Kiln\Loop\Deferred;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutCancellation;

final class FutureTest extends LoopTestCase
{
    public function testAFutureAwaitedByManyFibersResumesThemAll(): void
    {
        /** @var Deferred<string> $deferred */
        $deferred = new Deferred();
        $got = [];
        for ($i = 0; $i < 3; $i++) {
            Loop::async(static function () use ($deferred, &$got, $i): void {
                $got[$i] = $deferred->getFuture()->await();
            });
        }
        Loop::delay(0.001, static fn() => $deferred->complete('done'));
        $this->runGuarded();
        self::assertSame(['done', 'done', 'done'], $got);
        self::assertTrue($deferred->getFuture()->isComplete());
        self::assertSame('done', $deferred->getFuture()->await());
    }

    public function testAnErrorIsThrownToEveryAwaiter(): void
    {
        $deferred = new Deferred();
        $caught = 0;
        for ($i = 0; $i < 2; $i++) {
            Loop::async(static function () use ($deferred, &$caught): void {
                try {
                    $deferred->getFuture()->await();
                } catch (\DomainException) {
                    $caught++;
                }
            });
        }
        Loop::defer(static fn() => $deferred->error(new \DomainException('nope')));
        $this->runGuarded();
        self::assertSame(2, $caught);
    }

    public function testCompletingFromAnotherFiberAndInMain(): void
    {
        $deferred = new Deferred();
        Loop::async(static function () use ($deferred): void {
            \Kiln\Loop\delay(0.001);
            $deferred->complete(7);
        });
        self::assertSame(7, $deferred->getFuture()->await());
    }

    public function testCompletingTwiceIsAnError(): void
    {
        $deferred = new Deferred();
        $deferred->complete();
        $this->expectException(\Error::class);
        $deferred->complete();
    }

    public function testAwaitCanBeCancelledWithoutAffectingTheFuture(): void
    {
        $deferred = new Deferred();
        $caught = false;
        Loop::async(static function () use ($deferred, &$caught): void {
            try {
                $deferred->getFuture()->await(new TimeoutCancellation(0.005));
            } catch (CancelledException) {
                $caught = true;
            }
        });
        $this->runGuarded();
        self::assertTrue($caught);
        self::assertFalse($deferred->isComplete());
        $deferred->complete('later');
        self::assertSame('later', $deferred->getFuture()->await());
    }
}
