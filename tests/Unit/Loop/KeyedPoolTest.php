<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\KeyedPool;
use PHPUnit\Framework\TestCase;

final class KeyedPoolTest extends TestCase
{
    public function testTurnsGoToWaitersInArrivalOrderAndOneThatGivesUpPassesItOn(): void
    {
        /** @var KeyedPool<\stdClass> $pool */
        $pool = new KeyedPool(1);
        $woken = [];
        $ids = [];
        foreach (['a', 'b', 'c', 'd'] as $name) {
            $ids[$name] = $pool->wait('k', static function () use ($name, &$woken): bool {
                $woken[] = $name;
                return $name !== 'b'; // b's wait ended already: it passes the turn on
            });
        }
        $pool->stopWaiting('k', $ids['c']);
        $pool->wakeOne('k');
        self::assertSame(['a'], $woken);
        $pool->wakeOne('k');
        self::assertSame(['a', 'b', 'd'], $woken, 'b gave the turn to d; c had stopped waiting');
        $pool->wakeOne('k');
        self::assertSame(['a', 'b', 'd'], $woken);
    }

    public function testAStaleIdOfAForgottenKeyDoesNotRemoveANewWaiter(): void
    {
        /** @var KeyedPool<\stdClass> $pool */
        $pool = new KeyedPool(1);
        $item = $pool->open('k', static fn(): \stdClass => new \stdClass());
        self::assertNotNull($item);
        $stale = $pool->wait('k', static fn(): bool => true);
        $pool->wakeOne('k');
        $pool->remove('k', $item); // nothing open, idle or waiting: the key is forgotten
        $woken = false;
        $pool->wait('k', static function () use (&$woken): bool {
            $woken = true;
            return true;
        });
        $pool->stopWaiting('k', $stale); // the first waiter's late clean-up
        $pool->wakeOne('k');
        self::assertTrue($woken);
    }

    public function testManyWaitersOnOneKeyAreServedInOrder(): void
    {
        /** @var KeyedPool<\stdClass> $pool */
        $pool = new KeyedPool(1);
        $woken = [];
        foreach (range(1, 5000) as $n) {
            $pool->wait('k', static function () use ($n, &$woken): bool {
                $woken[] = $n;
                return true;
            });
        }
        foreach (range(1, 5000) as $_) {
            $pool->wakeOne('k');
        }
        self::assertSame(range(1, 5000), $woken);
    }
}
