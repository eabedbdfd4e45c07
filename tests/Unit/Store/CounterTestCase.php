<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\Counter;
use Kiln\Store\Store;
use Kiln\Tests\Support\ForkedChildren;
use PHPUnit\Framework\TestCase;

/** The Counter contract, on every Store backend. */
abstract class CounterTestCase extends TestCase
{
    use ForkedChildren;

    abstract protected function createStore(): Store;

    public function testACounterStartsAtZeroCountsBothWaysAndResets(): void
    {
        $counter = new Counter($this->createStore(), 'hits');
        self::assertSame(0, $counter->value());
        self::assertSame(1, $counter->increment());
        self::assertSame(6, $counter->increment(5));
        self::assertSame(4, $counter->decrement(2));
        self::assertSame(4, $counter->value());
        $counter->reset();
        self::assertSame(0, $counter->value());
    }

    public function testCountersOfDifferentNamesAreIndependentAndShareTheirStore(): void
    {
        $store = $this->createStore();
        (new Counter($store, 'a'))->increment(3);
        (new Counter($store, 'b'))->increment(7);
        self::assertSame(3, (new Counter($store, 'a'))->value());
        self::assertSame(7, (new Counter($store, 'b'))->value());
    }

    public function testACounterHoldsAny64BitValue(): void
    {
        $counter = new Counter($this->createStore(), 'big');
        self::assertSame(\PHP_INT_MAX, $counter->increment(\PHP_INT_MAX));
        self::assertSame(\PHP_INT_MAX - 1, $counter->decrement());
        self::assertSame(-1, $counter->decrement(\PHP_INT_MAX));
        self::assertSame(\PHP_INT_MIN, $counter->increment(\PHP_INT_MIN + 1));
    }

    public function testThreeProcessesHammeringOneCounterGetAnExactTotal(): void
    {
        $store = $this->createStore();
        $this->inChildren(3, static function () use ($store): void {
            $counter = new Counter($store, 'shared');
            for ($i = 0; $i < 2000; $i++) {
                $counter->increment();
            }
        });
        self::assertSame(6000, (new Counter($store, 'shared'))->value());
    }

    public function testACounterWithoutANameIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        new Counter($this->createStore(), '');
    }
}
