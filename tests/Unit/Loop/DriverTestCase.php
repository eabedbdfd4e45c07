<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\Driver;
use PHPUnit\Framework\TestCase;

/** The contract every Driver passes (see Driver's docblock). */
abstract class DriverTestCase extends TestCase
{
    use DriverHelpers;
    use SignalOrderingContract;

    protected Driver $loop;

    abstract protected function createDriver(): Driver;

    protected function setUp(): void
    {
        $this->loop = $this->createDriver();
    }

    public function testReadableWatcherFiresWhenDataArrives(): void
    {
        [$a, $b] = self::pair();
        $got = null;
        $this->loop->onReadable($a, function (string $id, $stream) use (&$got): void {
            $got = \fread($stream, 100);
            $this->loop->cancel($id);
        });
        $this->loop->delay(0.01, static fn() => \fwrite($b, 'ping'));
        $this->runGuarded();
        self::assertSame('ping', $got);
    }

    public function testWritableWatcherFiresAtOnceOnAnEmptySocket(): void
    {
        [$a] = self::pair();
        $calls = 0;
        $this->loop->onWritable($a, function (string $id) use (&$calls): void {
            $calls++;
            $this->loop->cancel($id);
        });
        $this->runGuarded();
        self::assertSame(1, $calls);
    }

    public function testReadableIsLevelTriggeredAndEveryWatcherIsCalled(): void
    {
        [$a, $b] = self::pair();
        \fwrite($b, 'x');
        $calls = ['one' => 0, 'two' => 0];
        foreach (\array_keys($calls) as $name) {
            $this->loop->onReadable($a, function (string $id) use (&$calls, $name): void {
                if (++$calls[$name] === 3) {
                    $this->loop->cancel($id);
                }
            });
        }
        $this->runGuarded();
        self::assertSame(['one' => 3, 'two' => 3], $calls);
    }

    public function testBufferedDataLeftInThePhpStreamStillCountsAsReadable(): void
    {
        [$a, $b] = self::pair();
        \fwrite($b, "one\ntwo\n");
        $lines = [];
        $this->loop->onReadable($a, function (string $id, $stream) use (&$lines): void {
            $lines[] = \fgets($stream); // reads the whole chunk into PHP's buffer, returns one line
            if (\count($lines) === 2) {
                $this->loop->cancel($id);
            }
        });
        $this->runGuarded();
        self::assertSame(["one\n", "two\n"], $lines);
    }

    public function testAnUnbufferedReaderReadsFromTheKernelSoWhatItLeavesIsReportedAgain(): void
    {
        [$a, $b] = self::pair();
        \fwrite($b, 'abc');
        $got = '';
        $unread = [];
        $this->loop->onReadableUnbuffered($a, function (string $id, $stream) use (&$got, &$unread): void {
            $got .= \fread($stream, 1); // with PHP's buffer on, this would pull all three bytes out of the kernel
            $unread[] = \stream_get_meta_data($stream)['unread_bytes'];
            if (\strlen($got) === 3) {
                $this->loop->cancel($id);
            }
        });
        $this->runGuarded();
        self::assertSame('abc', $got);
        self::assertSame([0, 0, 0], $unread);
    }

    public function testTimersFireInDueOrderAndNotEarly(): void
    {
        $order = [];
        $start = \hrtime(true);
        $elapsed = 0;
        $this->loop->delay(0.03, function () use (&$order, &$elapsed, $start): void {
            $order[] = 'c';
            $elapsed = \hrtime(true) - $start;
        });
        $this->loop->delay(0.01, static function () use (&$order): void {
            $order[] = 'a';
        });
        $this->loop->delay(0.01, static function () use (&$order): void {
            $order[] = 'b';
        });
        $this->runGuarded();
        self::assertSame(['a', 'b', 'c'], $order);
        self::assertGreaterThanOrEqual(30_000_000, $elapsed);
    }

    public function testADelayTooLongToCountInNanosecondsNeverFiresRatherThanAtOnce(): void
    {
        $fired = [];
        foreach ([\INF, 1e10, 1e300] as $seconds) {
            $id = $this->loop->delay($seconds, static function () use (&$fired, $seconds): void {
                $fired[] = $seconds;
            });
            $this->loop->unreference($id);
        }
        $this->loop->delay(0.02, static function (): void {});
        $this->runGuarded();
        self::assertSame([], $fired);
    }

    public function testRepeatFiresUntilCancelled(): void
    {
        $calls = 0;
        $this->loop->repeat(0.001, function (string $id) use (&$calls): void {
            if (++$calls === 5) {
                $this->loop->cancel($id);
            }
        });
        $this->runGuarded();
        self::assertSame(5, $calls);
    }

    public function testQueuedCallbacksRunOnceInOrderWithTheDeferredOnesAndKeepTheLoopRunning(): void
    {
        $order = [];
        $this->loop->queue(function () use (&$order): void {
            $order[] = 'queued 1';
            $this->loop->queue(static function () use (&$order): void {
                $order[] = 'queued from a queued one';
            });
        });
        $this->loop->defer(static function () use (&$order): void {
            $order[] = 'deferred';
        });
        $this->loop->queue(static function () use (&$order): void {
            $order[] = 'queued 2';
        });
        $this->runGuarded(); // returns only once nothing queued is left: run() ends when nothing keeps the loop
        self::assertSame(['queued 1', 'deferred', 'queued 2', 'queued from a queued one'], $order);
        $this->runGuarded();
        self::assertCount(4, $order, 'a queued callback runs once');
        $ran = false;
        $this->loop->queue(static function () use (&$ran): void {
            $ran = true;
        });
        $this->runGuarded();
        self::assertTrue($ran, 'a queued callback alone keeps the loop running until it ran');
    }

    public function testDefersRunInOrderAndADeferFromADeferRunsInTheSameTick(): void
    {
        $order = [];
        $this->loop->defer(function () use (&$order): void {
            $order[] = 1;
            $this->loop->defer(static function () use (&$order): void {
                $order[] = 3;
            });
        });
        $this->loop->defer(static function () use (&$order): void {
            $order[] = 2;
        });
        [$a] = self::pair();
        $this->loop->onWritable($a, function (string $id) use (&$order): void {
            $order[] = 'io';
            $this->loop->cancel($id);
        });
        $this->runGuarded();
        self::assertSame([1, 2, 3, 'io'], $order);
    }

    public function testACallbackCancelledDuringTheTickDoesNotRun(): void
    {
        $ran = false;
        $second = '';
        $this->loop->defer(function () use (&$second): void {
            $this->loop->cancel($second);
        });
        $second = $this->loop->defer(static function () use (&$ran): void {
            $ran = true;
        });
        $this->loop->cancel('no-such-id');
        $this->runGuarded();
        self::assertFalse($ran);
    }

    public function testDisabledWatcherDoesNotFireUntilEnabled(): void
    {
        $fired = [];
        $id = $this->loop->delay(0, static function () use (&$fired): void {
            $fired[] = 'timer';
        });
        $this->loop->disable($id);
        $this->loop->delay(0.01, function () use (&$fired, $id): void {
            $fired[] = 'enable';
            $this->loop->enable($id);
        });
        $this->runGuarded();
        self::assertSame(['enable', 'timer'], $fired);
    }

    public function testUnreferencedWatchersLetRunReturn(): void
    {
        [$a] = self::pair();
        $this->loop->unreference($this->loop->onReadable($a, static fn() => null));
        $this->loop->unreference($this->loop->repeat(10, static fn() => null));
        $this->runGuarded(); // asserts the guard did not have to stop it
    }

    public function testStopEndsRunAndRunCanBeCalledAgain(): void
    {
        $ticks = 0;
        $id = $this->loop->repeat(0.001, function () use (&$ticks): void {
            $ticks++;
            $this->loop->stop();
        });
        $this->runGuarded();
        self::assertSame(1, $ticks);
        $this->runGuarded();
        self::assertSame(2, $ticks);
        $this->loop->cancel($id);
        self::assertFalse($this->loop->isRunning());
    }

    public function testSignalWatcherSeesASignalSentToItself(): void
    {
        $got = null;
        $this->loop->onSignal(\SIGUSR1, function (string $id, int $signo) use (&$got): void {
            $got = $signo;
            $this->loop->cancel($id);
        });
        $this->loop->delay(0.01, static fn() => \posix_kill(\getmypid(), \SIGUSR1));
        $this->runGuarded();
        self::assertSame(\SIGUSR1, $got);
    }

    public function testASignalInterruptingAPollDoesNotBreakTheLoop(): void
    {
        [$a, $b] = self::pair();
        $signals = 0;
        $signal = $this->loop->onSignal(\SIGUSR2, static function () use (&$signals): void {
            $signals++;
        });
        $this->loop->delay(0.01, static fn() => \posix_kill(\getmypid(), \SIGUSR2));
        $this->loop->delay(0.05, static fn() => \fwrite($b, 'late'));
        $this->loop->onReadable($a, function (string $id) use ($signal): void {
            $this->loop->cancel($id);
            $this->loop->cancel($signal);
        });
        $this->runGuarded();
        self::assertSame(1, $signals);
    }

    public function testAnExceptionFromACallbackLeavesRunAndTheLoopRunsAgain(): void
    {
        $after = false;
        $this->loop->defer(static fn() => throw new \RuntimeException('boom'));
        $this->loop->defer(static function () use (&$after): void {
            $after = true;
        });
        try {
            $this->runGuarded();
            self::fail('The exception should leave run()');
        } catch (\RuntimeException $e) {
            self::assertSame('boom', $e->getMessage());
        }
        self::assertFalse($this->loop->isRunning());
        $this->runGuarded();
        self::assertTrue($after);
    }

    public function testManyStreamsAreWatchedAtOnce(): void
    {
        $pairs = [];
        $seen = [];
        for ($i = 0; $i < 200; $i++) {
            $pairs[$i] = self::pair();
            $this->loop->onReadable($pairs[$i][0], function (string $id, $stream) use (&$seen, $i): void {
                $seen[$i] = \fread($stream, 16);
                $this->loop->cancel($id);
            });
        }
        foreach ($pairs as $i => [, $writer]) {
            \fwrite($writer, "m$i");
        }
        $this->runGuarded();
        self::assertCount(200, $seen);
        self::assertSame('m199', $seen[199]);
    }

    public function testASocketPairRoundTrip(): void
    {
        [$client, $server] = self::pair();
        $reply = '';
        $this->loop->onReadable($server, function (string $id, $stream): void {
            $request = (string) \fread($stream, 100);
            $this->loop->cancel($id);
            $this->loop->onWritable($stream, function (string $id, $stream) use ($request): void {
                \fwrite($stream, \strtoupper($request));
                $this->loop->cancel($id);
            });
        });
        $this->loop->onWritable($client, function (string $id, $stream): void {
            \fwrite($stream, 'hello');
            $this->loop->cancel($id);
        });
        $this->loop->onReadable($client, function (string $id, $stream) use (&$reply): void {
            $reply = \fread($stream, 100);
            $this->loop->cancel($id);
        });
        $this->runGuarded();
        self::assertSame('HELLO', $reply);
    }

    public function testAStreamClosedWhileWatchedIsReportedOnceAndDropped(): void
    {
        [$a, $b] = self::pair(); // $b stays open: $a is not readable until it is closed
        $calls = 0;
        $this->loop->onReadable($a, static function () use (&$calls, $b): void {
            $calls++;
        });
        $this->loop->delay(0.01, static fn() => \fclose($a));
        $this->runGuarded(3.0);
        self::assertSame(1, $calls);
    }

    public function testNowIsMonotonic(): void
    {
        $times = [$this->loop->now()];
        $this->loop->repeat(0.001, function (string $id) use (&$times): void {
            $times[] = $this->loop->now();
            if (\count($times) === 5) {
                $this->loop->cancel($id);
            }
        });
        $this->runGuarded();
        self::assertSame($times, (static fn(array $t): array => \sort($t) ? $t : [])($times));
    }
}
