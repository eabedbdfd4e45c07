<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\Lock;
use Kiln\Store\Store;
use PHPUnit\Framework\TestCase;

/** The Lock contract (one holder per name, released only by its holder, expiring), on every Store backend. */
abstract class LockTestCase extends TestCase
{
    abstract protected function createStore(): Store;

    public function testOneHolderAtATimeAndReleaseFreesTheName(): void
    {
        $store = $this->createStore();
        [$first, $second] = [new Lock($store, 'job'), new Lock($store, 'job')];
        self::assertTrue($first->acquire());
        self::assertTrue($first->held());
        self::assertFalse($second->acquire());
        self::assertTrue((new Lock($store, 'another job'))->acquire(), 'names are independent');
        $first->release();
        self::assertFalse($first->held());
        self::assertTrue($second->acquire());
    }

    public function testAHolderWhoseLockExpiredCannotReleaseTheNextHolders(): void
    {
        $store = $this->createStore();
        $slow = new Lock($store, 'job', ttl: 1);
        self::assertTrue($slow->acquire());
        usleep(2_100_000);
        $next = new Lock($store, 'job');
        self::assertTrue($next->acquire(), 'an expired lock is free');
        self::assertFalse($slow->held());
        $slow->release();
        self::assertTrue($next->held(), "the first holder's late release leaves the new holder's lock alone");
    }

    public function testWaitGivesUpAfterItsTimeoutAndGetsALockReleasedMeanwhile(): void
    {
        $store = $this->createStore();
        $holder = new Lock($store, 'job');
        self::assertTrue($holder->acquire());
        $waiter = new Lock($store, 'job');
        $started = microtime(true);
        self::assertFalse($waiter->wait(0.2));
        self::assertGreaterThanOrEqual(0.1, microtime(true) - $started);
        $holder->release();
        self::assertTrue($waiter->wait(0.2));
    }

    public function testAcquiringAHeldLockTwiceIsAnError(): void
    {
        $lock = new Lock($this->createStore(), 'job');
        $lock->acquire();
        $this->expectException(\Error::class);
        $lock->acquire();
    }
}
