<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use function Kiln\Loop\awaitReadable;
use function Kiln\Loop\awaitWritable;

use Kiln\Loop\CancelledException;
use Kiln\Loop\CompositeCancellation;
use Kiln\Loop\DeferredCancellation;

use function Kiln\Loop\delay;

use Kiln\Loop\Loop;

use function Kiln\Loop\timeout;

use Kiln\Loop\TimeoutCancellation;
use Kiln\Loop\TimeoutException;

final class PrimitivesTest extends LoopTestCase
{
    public function testDelaySuspendsForAtLeastTheDelay(): void
    {
        $elapsed = 0;
        Loop::async(static function () use (&$elapsed): void {
            $start = \hrtime(true);
            delay(0.02);
            $elapsed = \hrtime(true) - $start;
        });
        $this->runGuarded();
        self::assertGreaterThanOrEqual(20_000_000, $elapsed);
    }

    public function testDelayInMainRunsTheLoop(): void
    {
        $ran = false;
        Loop::defer(static function () use (&$ran): void {
            $ran = true;
        });
        delay(0.001);
        self::assertTrue($ran);
    }

    public function testAwaitReadableResumesWhenDataArrives(): void
    {
        [$a, $b] = self::pair();
        $got = null;
        Loop::async(static function () use ($a, &$got): void {
            awaitReadable($a);
            $got = \fread($a, 10);
        });
        Loop::delay(0.005, static fn() => \fwrite($b, 'data'));
        $this->runGuarded();
        self::assertSame('data', $got);
    }

    public function testAwaitWritableResumesOnAWritableSocket(): void
    {
        [$a] = self::pair();
        $done = false;
        Loop::async(static function () use ($a, &$done): void {
            awaitWritable($a);
            $done = true;
        });
        $this->runGuarded();
        self::assertTrue($done);
    }

    public function testADeferredCancellationInterruptsAWait(): void
    {
        [$a, $b] = self::pair();
        $cancellation = new DeferredCancellation();
        $caught = null;
        Loop::async(static function () use ($a, $cancellation, &$caught): void {
            try {
                awaitReadable($a, $cancellation->getCancellation());
            } catch (CancelledException $e) {
                $caught = $e;
            }
        });
        $reason = new \RuntimeException('client went away');
        Loop::delay(0.005, static fn() => $cancellation->cancel($reason));
        $this->runGuarded();
        self::assertInstanceOf(CancelledException::class, $caught);
        self::assertSame($reason, $caught->getPrevious());
        self::assertTrue($cancellation->isCancelled());
        \fclose($b);
    }

    public function testAnAlreadyRequestedCancellationThrowsBeforeWaiting(): void
    {
        $cancellation = new DeferredCancellation();
        $cancellation->cancel();
        $this->expectException(CancelledException::class);
        delay(1, $cancellation->getCancellation());
    }

    public function testATimeoutCancellationThrowsTimeoutException(): void
    {
        [$a, $b] = self::pair();
        $caught = null;
        Loop::async(static function () use ($a, &$caught): void {
            try {
                awaitReadable($a, new TimeoutCancellation(0.01, 'read timed out'));
            } catch (TimeoutException $e) {
                $caught = $e->getMessage();
            }
        });
        $this->runGuarded();
        self::assertSame('read timed out', $caught);
        \fclose($b);
    }

    public function testAnUnusedTimeoutCancellationDoesNotKeepTheLoopAlive(): void
    {
        $timeout = new TimeoutCancellation(60);
        $this->runGuarded(1);
        self::assertFalse($timeout->isRequested());
    }

    public function testACompositeCancellationFollowsTheFirstRequest(): void
    {
        $first = new DeferredCancellation();
        $composite = new CompositeCancellation($first->getCancellation(), new TimeoutCancellation(60));
        $caught = null;
        Loop::async(static function () use ($composite, &$caught): void {
            try {
                delay(30, $composite);
            } catch (CancelledException $e) {
                $caught = $e;
            }
        });
        Loop::delay(0.005, static fn() => $first->cancel());
        $this->runGuarded();
        self::assertInstanceOf(CancelledException::class, $caught);
        self::assertNotInstanceOf(TimeoutException::class, $caught);
        self::assertTrue($composite->isRequested());
    }

    public function testTimeoutHelperPassesATimeoutCancellation(): void
    {
        $this->expectException(TimeoutException::class);
        timeout(0.005, static fn($cancellation) => delay(5, $cancellation));
    }

    public function testAWaitThatCompletesFirstIgnoresALaterCancellation(): void
    {
        $cancellation = new DeferredCancellation();
        delay(0.001, $cancellation->getCancellation());
        $cancellation->cancel();
        $this->runGuarded();
        $this->addToAssertionCount(1);
    }

    /** @return array{resource, resource} */
    private static function pair(): array
    {
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        self::assertIsArray($pair);

        return $pair;
    }
}
