<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\Lease;
use Kiln\Store\MemoryTable;
use Kiln\Store\SharedState;
use PHPUnit\Framework\TestCase;

final class LeaseTest extends TestCase
{
    private string $path;

    private SharedState $state;

    protected function setUp(): void
    {
        $this->path = sys_get_temp_dir() . '/kiln-lease-test-' . getmypid() . '-' . bin2hex(random_bytes(4));
        $this->state = MemoryTable::file($this->path, buckets: 16, slots: 4);
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    public function testTheFirstHolderGetsTheLeaseAndTheSecondDoesNot(): void
    {
        $a = new Lease($this->state, 'tick', 'a', 5);
        $b = new Lease($this->state, 'tick', 'b', 5);

        self::assertTrue($a->acquire());
        self::assertFalse($b->acquire());
        self::assertTrue($a->acquire(), 'the holder renews');
        self::assertSame('a', $b->holder());
    }

    public function testAReleasedLeaseGoesToTheNextHolderThatAsks(): void
    {
        $a = new Lease($this->state, 'tick', 'a', 5);
        $b = new Lease($this->state, 'tick', 'b', 5);
        $a->acquire();

        $b->release(); // not b's: nothing happens
        self::assertSame('a', $a->holder());
        $a->release();

        self::assertNull($a->holder());
        self::assertTrue($b->acquire());
        self::assertFalse($a->acquire());
    }

    public function testAnExpiredLeaseIsTakenByAnother(): void
    {
        $a = new Lease($this->state, 'tick', 'a', 5);
        $b = new Lease($this->state, 'tick', 'b', 5);
        $a->acquire();

        $this->state->update('kiln.lease.tick', static fn(?array $v): array => ['holder' => 'a', 'until' => microtime(true) - 0.1], 60);

        self::assertNull($b->holder());
        self::assertTrue($b->acquire());
        self::assertFalse($a->acquire());
    }

    public function testAskingForAHeldLeaseDoesNotProlongIt(): void
    {
        $until = microtime(true) + 0.5;
        $this->state->update('kiln.lease.tick', static fn(): array => ['holder' => 'a', 'until' => $until], 60);
        $b = new Lease($this->state, 'tick', 'b', 5);

        self::assertFalse($b->acquire());
        self::assertSame(['holder' => 'a', 'until' => $until], $this->state->get('kiln.lease.tick'));
    }

    public function testLeasesOfOtherNamesAreIndependent(): void
    {
        self::assertTrue((new Lease($this->state, 'one', 'a', 5))->acquire());
        self::assertTrue((new Lease($this->state, 'two', 'b', 5))->acquire());
    }

    public function testALeaseShorterThanOneSecondIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        new Lease($this->state, 'tick', 'a', 0);
    }
}
