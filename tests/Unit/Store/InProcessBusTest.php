<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Store\BusException;
use Kiln\Store\InProcessBus;
use PHPUnit\Framework\TestCase;

final class InProcessBusTest extends TestCase
{
    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
    }

    public function testMessagesReachEachSubscriberOnceInPublishOrderAfterPublishReturns(): void
    {
        $bus = new InProcessBus();
        $seen = [];
        $bus->subscribe('a', function (string $channel, string $payload) use (&$seen): void {
            $seen[] = "1:$channel:$payload";
        });
        $bus->subscribe('a', function (string $channel, string $payload) use (&$seen): void {
            $seen[] = "2:$channel:$payload";
        });
        $bus->subscribe('b', function (string $channel, string $payload) use (&$seen): void {
            $seen[] = "3:$channel:$payload";
        });
        $bus->publish('a', 'x');
        $bus->publish('b', 'y');
        $bus->publish('a', 'z');
        self::assertSame([], $seen, 'no listener runs inside publish()');
        Loop::run();
        self::assertSame(['1:a:x', '2:a:x', '3:b:y', '1:a:z', '2:a:z'], $seen);
    }

    public function testAnUnsubscribedListenerHearsNothingMore(): void
    {
        $bus = new InProcessBus();
        $seen = 0;
        $id = $bus->subscribe('a', function () use (&$seen): void {
            $seen++;
        });
        $bus->publish('a', '1');
        Loop::run();
        $bus->unsubscribe($id);
        $bus->unsubscribe($id);
        $bus->publish('a', '2');
        Loop::run();
        self::assertSame(1, $seen);
    }

    public function testAThrowingListenerDoesNotStopTheOthers(): void
    {
        $bus = new InProcessBus();
        $errors = [];
        Loop::setErrorHandler(function (\Throwable $e) use (&$errors): void {
            $errors[] = $e->getMessage();
        });
        $seen = 0;
        $bus->subscribe('a', function (): void {
            throw new \RuntimeException('boom');
        });
        $bus->subscribe('a', function () use (&$seen): void {
            $seen++;
        });
        $bus->publish('a', '1');
        Loop::run();
        Loop::setErrorHandler(null);
        self::assertSame(['boom'], $errors);
        self::assertSame(1, $seen);
    }

    public function testPublishingOnAClosedBusFailsLoudly(): void
    {
        $bus = new InProcessBus();
        $bus->close();
        $this->expectException(BusException::class);
        $bus->publish('a', '1');
    }

    public function testAListenerUnsubscribedByAnEarlierOneDuringADeliveryIsNotCalled(): void
    {
        $bus = new InProcessBus();
        $seen = [];
        $second = 0;
        $bus->subscribe('a', function () use ($bus, &$second, &$seen): void {
            $seen[] = 'first';
            $bus->unsubscribe($second);
        });
        $second = $bus->subscribe('a', function () use (&$seen): void {
            $seen[] = 'second';
        });
        $bus->publish('a', '1');
        Loop::run();
        self::assertSame(['first'], $seen);
    }
}
