<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server\Internal;

use Kiln\Server\Internal\StallVerdict;
use Kiln\Server\Internal\StallWatch;
use PHPUnit\Framework\TestCase;

final class StallWatchTest extends TestCase
{
    public function testAWorkerHeardFromWithinTheTimeoutIsNeverReported(): void
    {
        $watch = new StallWatch(10.0);
        $watch->watch(100, 0.0);
        for ($now = 0.5; $now < 60; $now += 0.5) {
            if (fmod($now, 9.0) < 0.5) {
                self::assertNull($watch->heard(100, $now));
            }
            self::assertSame([], $watch->check($now), "at $now s");
        }
        self::assertNull($watch->stalledFor(100, 60.0));
    }

    public function testASilentWorkerIsReportedOnceAtTheTimeoutThenEndedAtTwiceIt(): void
    {
        $watch = new StallWatch(10.0);
        $watch->watch(100, 0.0);
        $watch->watch(200, 0.0);
        $due = [];
        for ($now = 0.5; $now <= 25; $now += 0.5) {
            $watch->heard(200, $now);
            foreach ($watch->check($now) as $verdict) {
                $due[] = [$now, ...$verdict];
            }
        }
        self::assertSame([[10.0, 100, StallVerdict::Stalled, 10.0], [20.0, 100, StallVerdict::Kill, 20.0]], $due);
        self::assertNull($watch->stalledFor(100, 25.0), 'ended: no longer watched');
        self::assertSame([], $watch->check(40.0), 'asked to end once');
    }

    public function testAStalledWorkerHeardFromAgainIsKeptAndSaysHowLongItStoodStill(): void
    {
        $watch = new StallWatch(10.0);
        $watch->watch(100, 0.0);
        self::assertSame([[10.0, 100, StallVerdict::Stalled, 10.0]], self::checks($watch, 0.0, 14.0));
        self::assertSame(14.0, $watch->stalledFor(100, 14.0), 'still since it was last heard from');
        self::assertSame(15.0, $watch->heard(100, 15.0));
        self::assertNull($watch->stalledFor(100, 15.0));
        self::assertSame([[25.0, 100, StallVerdict::Stalled, 10.0]], self::checks($watch, 14.5, 34.5), 'not ended at 20: it turned again; a new stall is reported anew');
    }

    public function testOnlyWatchedWorkersAreReportedAndAForgottenOneIsDroppedWhenItExits(): void
    {
        $watch = new StallWatch(1.0);
        self::assertNull($watch->heard(300, 0.0), 'a booting worker is not watched yet');
        $watch->watch(100, 0.0);
        $watch->forget(100);
        self::assertSame([], $watch->check(0.5));
        self::assertSame([], $watch->check(5.0));
        self::assertSame(INF, $watch->nextCheckAt());
    }

    public function testNextCheckIsWhenTheQuietestWorkerReachesItsNextStep(): void
    {
        $watch = new StallWatch(4.0);
        $watch->watch(100, 1.0);
        $watch->watch(200, 2.0);
        self::assertSame(5.0, $watch->nextCheckAt());
        $watch->check(3.0);
        $watch->heard(200, 3.0);
        self::assertSame([[100, StallVerdict::Stalled, 4.0]], $watch->check(5.0));
        self::assertSame(7.0, $watch->nextCheckAt(), 'worker 200 at 3 + 4');
        $watch->heard(200, 6.0);
        self::assertSame(9.0, $watch->nextCheckAt(), 'worker 100 is ended at 1 + 2 x 4');
    }

    public function testTimeTheSupervisorDidNotRunIsForgivenNotCountedAsAStall(): void
    {
        $watch = new StallWatch(10.0);
        $watch->watch(100, 0.0);
        self::assertSame([], $watch->check(0.5));
        // The whole process group was stopped (^Z) for 100 s; the supervisor checks before reading any beat.
        self::assertSame([], $watch->check(100.5));
        self::assertSame([[110.0, 100, StallVerdict::Stalled, 10.0]], self::checks($watch, 101.0, 115.0), 'a stall after that is seen');
    }

    public function testAShortDelayOfTheSupervisorForgivesNothing(): void
    {
        $watch = new StallWatch(1.0);
        $watch->watch(100, 0.0);
        $watch->check(0.0);
        self::assertSame([[100, StallVerdict::Stalled, 1.5]], $watch->check(1.5));
    }

    /**
     * Checks every half second from $from to $to, as the supervisor does.
     *
     * @return list<array{float, int, StallVerdict, float}> when, then what check() said
     */
    private static function checks(StallWatch $watch, float $from, float $to): array
    {
        $due = [];
        for ($now = $from; $now <= $to; $now += 0.5) {
            foreach ($watch->check($now) as $verdict) {
                $due[] = [$now, ...$verdict];
            }
        }
        return $due;
    }

    public function testATimeoutMustBePositive(): void
    {
        $this->expectException(\ValueError::class);
        new StallWatch(0.0);
    }
}
