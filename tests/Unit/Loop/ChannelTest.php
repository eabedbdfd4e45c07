<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\CancelledException;
use Kiln\Loop\Channel;
use Kiln\Loop\ChannelClosedException;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutCancellation;

final class ChannelTest extends LoopTestCase
{
    public function testValuesArriveInOrderAndSendSuspendsWhenFull(): void
    {
        /** @var Channel<int> $channel */
        $channel = new Channel(2);
        $log = [];
        Loop::async(static function () use ($channel, &$log): void {
            for ($i = 1; $i <= 4; $i++) {
                $channel->send($i);
                $log[] = "sent $i";
            }
            $channel->close();
        });
        self::assertSame(['sent 1', 'sent 2'], $log, 'the third send waits for room');
        Loop::async(static function () use ($channel, &$log): void {
            foreach ($channel as $value) {
                $log[] = "got $value";
            }
            $log[] = 'end';
        });
        $this->runGuarded();
        self::assertSame([1, 2, 3, 4], \array_map(static fn(string $l): int => (int) \substr($l, 4), \array_values(\array_filter($log, static fn(string $l): bool => \str_starts_with($l, 'got')))));
        self::assertSame('end', \end($log));
    }

    public function testAnUnbufferedChannelHandsValuesOver(): void
    {
        $channel = new Channel(0);
        $got = null;
        $sent = false;
        Loop::async(static function () use ($channel, &$sent): void {
            $channel->send('hand-over');
            $sent = true;
        });
        self::assertFalse($sent);
        Loop::async(static function () use ($channel, &$got): void {
            $got = $channel->receive();
        });
        $this->runGuarded();
        self::assertSame('hand-over', $got);
        self::assertTrue($sent);
    }

    public function testCloseWakesWaitingReceiversWithChannelClosed(): void
    {
        $channel = new Channel(1);
        $caught = 0;
        for ($i = 0; $i < 2; $i++) {
            Loop::async(static function () use ($channel, &$caught): void {
                try {
                    $channel->receive();
                } catch (ChannelClosedException) {
                    $caught++;
                }
            });
        }
        Loop::defer(static fn() => $channel->close());
        $this->runGuarded();
        self::assertSame(2, $caught);
        $this->expectException(ChannelClosedException::class);
        $channel->send(1);
    }

    public function testBufferedValuesSurviveClose(): void
    {
        $channel = new Channel(3);
        $channel->send('a');
        $channel->send('b');
        $channel->close();
        self::assertSame(['a', 'b'], \iterator_to_array($channel, false));
    }

    public function testReceiveCanTimeOut(): void
    {
        $channel = new Channel();
        $caught = false;
        Loop::async(static function () use ($channel, &$caught): void {
            try {
                $channel->receive(new TimeoutCancellation(0.005));
            } catch (CancelledException) {
                $caught = true;
            }
        });
        $this->runGuarded();
        self::assertTrue($caught);
        $sent = false;
        Loop::async(static function () use ($channel, &$sent): void {
            $channel->send('after'); // the timed-out receiver must not be handed this value
            $sent = true;
        });
        self::assertFalse($sent);
    }

    public function testManyWaitingSendersAreTakenInOrderAndACancelledOneNever(): void
    {
        /** @var Channel<int|null> $channel */
        $channel = new Channel();
        $cancel = new \Kiln\Loop\DeferredCancellation();
        foreach (range(1, 2000) as $n) {
            Loop::async(static function () use ($channel, $n, $cancel): void {
                try {
                    $channel->send($n === 1000 ? null : $n, $n === 7 ? $cancel->getCancellation() : null);
                } catch (CancelledException) {
                }
            });
        }
        $cancel->cancel();
        $got = [];
        Loop::async(static function () use ($channel, &$got): void {
            \Kiln\Loop\delay(0.001); // the cancellation reaches sender 7 first
            for ($i = 0; $i < 1999; $i++) {
                $got[] = $channel->receive();
            }
        });
        $this->runGuarded();
        $expected = range(1, 2000);
        unset($expected[6]);
        $expected[999] = null;
        self::assertSame(array_values($expected), $got);
    }

    public function testNegativeCapacityIsRejected(): void
    {
        $this->expectException(\ValueError::class);
        new Channel(-1);
    }
}
