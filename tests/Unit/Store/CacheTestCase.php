<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\Cache;
use Kiln\Store\Psr16Cache;
use Kiln\Store\Store;
use Kiln\Tests\Support\ForkedChildren;
use PHPUnit\Framework\TestCase;
use Psr\SimpleCache\InvalidArgumentException;

/** The Cache contract (tags, remember() with its node-wide lock) and its PSR-16 adapter, on every Store backend. */
abstract class CacheTestCase extends TestCase
{
    use ForkedChildren;

    abstract protected function createStore(): Store;

    public function testAMissGivesTheDefaultAndNullIsAValueLikeAnyOther(): void
    {
        $cache = new Cache($this->createStore());
        self::assertSame('default', $cache->get('k', 'default'));
        self::assertFalse($cache->has('k'));
        $cache->set('k', null);
        self::assertTrue($cache->has('k'));
        self::assertNull($cache->get('k', 'default'));
        $cache->set('k', ['a' => [1, 2]], 60);
        self::assertSame(['a' => [1, 2]], $cache->get('k'));
        self::assertTrue($cache->delete('k'));
        self::assertSame('gone', $cache->get('k', 'gone'));
    }

    public function testInvalidatingATagMissesItsEntriesOnlyAndANewWriteIsSeenAgain(): void
    {
        $cache = new Cache($this->createStore());
        $cache->set('user:1', 'Ada', 60, ['users', 'user:1']);
        $cache->set('user:2', 'Bob', 60, ['users']);
        $cache->set('post:1', 'Hello', 60, ['posts']);
        $cache->set('plain', 'untagged');
        $cache->invalidateTags('users');
        self::assertNull($cache->get('user:1'));
        self::assertNull($cache->get('user:2'));
        self::assertSame('Hello', $cache->get('post:1'));
        self::assertSame('untagged', $cache->get('plain'));
        $cache->set('user:1', 'Ada again', 60, ['users']);
        self::assertSame('Ada again', $cache->get('user:1'));
    }

    public function testAValueACacheCannotHoldIsRefusedWithAClearError(): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessageMatches('/cannot be stored/');
        (new Cache($this->createStore()))->set('k', new \stdClass());
    }

    public function testRememberComputesOnceAndAFailedComputationLeavesTheLockFree(): void
    {
        $cache = new Cache($this->createStore());
        $calls = 0;
        $compute = static function () use (&$calls): int {
            return ++$calls * 10;
        };
        self::assertSame(10, $cache->remember('k', 60, $compute));
        self::assertSame(10, $cache->remember('k', 60, $compute));
        self::assertSame(1, $calls);
        try {
            $cache->remember('failing', 60, static fn(): never => throw new \RuntimeException('backend down'));
            self::fail('the exception reaches the caller');
        } catch (\RuntimeException $e) {
            self::assertSame('backend down', $e->getMessage());
        }
        self::assertSame('recovered', $cache->remember('failing', 60, static fn(): string => 'recovered'));
    }

    public function testRememberInThreeProcessesAtOnceComputesOnceAndTheOthersWaitForIt(): void
    {
        $store = $this->createStore();
        $cache = new Cache($store);
        $results = sys_get_temp_dir() . '/kiln-remember-' . bin2hex(random_bytes(4));
        $this->inChildren(3, static function () use ($cache, $store, $results): void {
            $value = $cache->remember('slow', 60, static function () use ($store): string {
                $n = $store->increment('computations');
                usleep(300_000);
                return "computed by #$n";
            });
            file_put_contents($results, $value . "\n", \FILE_APPEND | \LOCK_EX);
        });
        $lines = file($results, \FILE_IGNORE_NEW_LINES);
        @unlink($results);
        self::assertSame(1, $store->get('computations'));
        self::assertSame(['computed by #1', 'computed by #1', 'computed by #1'], $lines);
    }

    public function testThePsr16AdapterKeepsObjectsChecksKeysAndHonoursTtls(): void
    {
        $cache = new Psr16Cache(new Cache($this->createStore()));
        $object = new \ArrayObject(['a' => 1]);
        self::assertTrue($cache->set('object', $object));
        self::assertEquals($object, $cache->get('object'));
        self::assertTrue($cache->set('false', false, new \DateInterval('PT60S')));
        self::assertFalse($cache->get('false', 'default'));
        self::assertTrue($cache->has('false'));
        self::assertTrue($cache->setMultiple(['a' => 1, 'b' => 2], 60));
        self::assertSame(['a' => 1, 'b' => 2, 'c' => 'none'], $cache->getMultiple(['a', 'b', 'c'], 'none'));
        self::assertTrue($cache->set('a', 'expired at once', 0));
        self::assertFalse($cache->has('a'));
        self::assertTrue($cache->deleteMultiple(['b']));
        self::assertTrue($cache->clear());
        self::assertNull($cache->get('object'));
        foreach (['', 'a:b', 'with/slash', '{x}'] as $key) {
            try {
                $cache->get($key);
                self::fail("'$key' was accepted");
            } catch (InvalidArgumentException $e) {
                self::assertStringContainsString('Invalid PSR-16 cache key', $e->getMessage());
            }
        }
    }
}
