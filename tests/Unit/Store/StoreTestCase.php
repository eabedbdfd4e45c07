<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\Store;
use Kiln\Tests\Support\ForkedChildren;
use PHPUnit\Framework\TestCase;

/**
 * The contract every Store backend passes (see the interface's docblock). A backend's test says how to make
 * a fresh store, and a small one that must evict.
 */
abstract class StoreTestCase extends TestCase
{
    use ForkedChildren;

    /** A fresh, empty store, shared with processes forked after this call. */
    abstract protected function createStore(): Store;

    /**
     * A fresh store that holds far fewer than 500 keys, and the most keys it may hold at once.
     *
     * @return array{Store, int}
     */
    abstract protected function createSmallStore(): array;

    public function testAnAbsentKeyReadsAsNullAndASetValueReadsBackAsStored(): void
    {
        $store = $this->createStore();
        self::assertNull($store->get('nothing'));
        $values = ['int' => 42, 'float' => 1.5, 'string' => "a\0b", 'true' => true, 'false' => false, 'zero' => 0,
            'empty' => '', 'list' => [1, 'two', null, [3.5]], 'map' => ['a' => ['b' => false]]];
        foreach ($values as $key => $value) {
            $store->set($key, $value);
        }
        foreach ($values as $key => $value) {
            self::assertSame($value, $store->get($key), $key);
        }
    }

    public function testKeysAreIndependentAndAnyStringIsAKey(): void
    {
        $store = $this->createStore();
        $keys = ['a', 'A', "with\0nul", str_repeat('long', 200), '', '🔑'];
        foreach ($keys as $i => $key) {
            $store->set($key, $i);
        }
        foreach ($keys as $i => $key) {
            self::assertSame($i, $store->get($key), 'key #' . $i);
        }
    }

    public function testAddWritesOnlyAnAbsentKeyAndDeleteSaysWhetherTheKeyExisted(): void
    {
        $store = $this->createStore();
        self::assertTrue($store->add('k', 'first'));
        self::assertFalse($store->add('k', 'second'));
        self::assertSame('first', $store->get('k'));
        self::assertTrue($store->delete('k'));
        self::assertFalse($store->delete('k'));
        self::assertNull($store->get('k'));
        self::assertTrue($store->add('k', 'third'));
    }

    public function testIncrementStartsAnAbsentKeyAtZeroAndRefusesANonInteger(): void
    {
        $store = $this->createStore();
        self::assertSame(1, $store->increment('n'));
        self::assertSame(11, $store->increment('n', 10));
        self::assertSame(-4, $store->increment('n', -15));
        self::assertSame(-4, $store->get('n'));
        self::assertSame(\PHP_INT_MAX - 1, $store->increment('big', \PHP_INT_MAX - 1));
        self::assertSame(\PHP_INT_MIN + 1, $store->increment('small', \PHP_INT_MIN + 1));
        foreach ([['big', 2], ['small', -2]] as [$key, $by]) {
            try {
                $store->increment($key, $by);
                self::fail("$key + $by left the 64-bit range unnoticed");
            } catch (\ValueError $e) {
                self::assertStringContainsString('64-bit', $e->getMessage(), "$key + $by");
            }
        }
        self::assertSame(\PHP_INT_MAX - 1, $store->get('big'), 'a refused increment leaves the value');
        self::assertSame(\PHP_INT_MIN + 1, $store->get('small'));
        self::assertSame(\PHP_INT_MAX, $store->increment('big'));
        $store->set('text', 'seven');
        try {
            $store->increment('text');
            self::fail('a string is not incremented');
        } catch (\ValueError $e) {
            self::assertStringContainsString('not an integer', $e->getMessage());
        }
        self::assertSame('seven', $store->get('text'));
    }

    public function testCompareAndSetWritesOnlyOverTheExpectedValue(): void
    {
        $store = $this->createStore();
        self::assertTrue($store->compareAndSet('k', null, ['v' => 1]), 'null expects an absent key');
        self::assertFalse($store->compareAndSet('k', null, ['v' => 9]));
        self::assertFalse($store->compareAndSet('k', ['v' => 2], ['v' => 3]));
        self::assertFalse($store->compareAndSet('k', ['v' => '1'], ['v' => 3]), 'compared strictly');
        self::assertSame(['v' => 1], $store->get('k'));
        self::assertTrue($store->compareAndSet('k', ['v' => 1], ['v' => 2]));
        self::assertSame(['v' => 2], $store->get('k'));
        self::assertTrue($store->compareAndSet('k', ['v' => 2], null), 'null as the new value deletes');
        self::assertNull($store->get('k'));
    }

    public function testValuesThatCannotBeStoredAreRefusedWithAClearErrorAndNothingIsWritten(): void
    {
        $store = $this->createStore();
        $store->set('k', 'kept');
        $resource = fopen('php://memory', 'r');
        $refused = ['an object' => new \stdClass(), 'a closure' => static fn() => 1, 'a resource' => $resource,
            'an object in an array' => ['a' => [new \ArrayObject()]], 'null' => null, 'too large' => str_repeat('x', 4 << 20)];
        foreach ($refused as $what => $value) {
            try {
                $store->set('k', $value);
                self::fail("$what was stored");
            } catch (\ValueError $e) {
                self::assertMatchesRegularExpression('/cannot be stored|too large|delete\(\)/', $e->getMessage(), $what);
            }
            self::assertSame('kept', $store->get('k'), $what);
        }
        $this->expectException(\ValueError::class);
        $store->compareAndSet('k', 'kept', new \stdClass());
    }

    public function testANegativeTtlIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        $this->createStore()->set('k', 1, -1);
    }

    public function testAnExpiredKeyReadsAsAbsentWhileIncrementKeepsTheExpiry(): void
    {
        $store = $this->createStore();
        $written = microtime(true);
        $store->set('short', 'v', 1);
        $store->increment('counter', 1, 1);
        $store->increment('counter', 1, 0); // an existing key keeps its TTL
        $store->set('forever', 'v');
        usleep(max(0, (int) (($written + 2.2 - microtime(true)) * 1e6)));
        self::assertNull($store->get('short'));
        self::assertNull($store->get('counter'));
        self::assertTrue($store->add('short', 'again'));
        self::assertSame('v', $store->get('forever'));
    }

    public function testCountAndScanSeeEveryKeyOnce(): void
    {
        $store = $this->createStore();
        $expected = [];
        for ($i = 0; $i < 250; $i++) {
            $store->set("key:$i", $i);
            $expected[] = "key:$i";
        }
        $store->delete('key:7');
        unset($expected[7]);
        self::assertSame(249, $store->count());
        $seen = [];
        $cursor = '';
        $pages = 0;
        do {
            [$cursor, $keys] = $store->scan($cursor, 20);
            array_push($seen, ...$keys);
            self::assertLessThan(1000, ++$pages, 'the scan ends');
        } while ($cursor !== '');
        sort($seen);
        $expected = array_values($expected);
        sort($expected);
        self::assertSame($expected, $seen);
    }

    public function testAFullStoreEvictsCountsEvictionsAndKeepsTheLatestWrite(): void
    {
        [$store, $bound] = $this->createSmallStore();
        self::assertSame(0, $store->evictions());
        for ($i = 0; $i < 500; $i++) {
            $store->set("key:$i", str_repeat('v', 40), 60 + $i);
            self::assertSame(str_repeat('v', 40), $store->get("key:$i"), 'the write just made is never dropped');
        }
        self::assertLessThanOrEqual($bound, $store->count());
        self::assertGreaterThan(0, $store->count());
        self::assertGreaterThanOrEqual(500 - $bound, $store->evictions());
        self::assertNotNull($store->get('key:499'));
    }

    public function testTwoProcessesHammeringOneKeyLoseNoIncrementAndNoCompareAndSet(): void
    {
        $store = $this->createStore();
        $store->set('cas', 0);
        $this->inChildren(3, static function () use ($store): void {
            for ($i = 0; $i < 1000; $i++) {
                $store->increment('hits');
                do {
                    $current = $store->get('cas');
                } while (!\is_int($current) || !$store->compareAndSet('cas', $current, $current + 1));
            }
        });
        self::assertSame(3000, $store->get('hits'));
        self::assertSame(3000, $store->get('cas'));
    }
}
