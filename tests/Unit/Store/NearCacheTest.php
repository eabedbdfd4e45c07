<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Store\ApcuState;
use Kiln\Store\ApcuStore;
use Kiln\Store\Cache;
use Kiln\Store\InProcessBus;
use Kiln\Store\NearCache;
use Kiln\Store\StoreException;
use PHPUnit\Framework\TestCase;

/**
 * Two nodes' caches over one shared store (standing for Redis), each with its own node-local first level, and one
 * bus between them.
 */
final class NearCacheTest extends TestCase
{
    private ApcuStore $shared;

    private InProcessBus $bus;

    protected function setUp(): void
    {
        self::assertTrue(ApcuState::available(), 'APCu must be loaded and on: run `make test`, or php -d apc.enable_cli=1 vendor/bin/phpunit');
        Loop::set(new SelectDriver());
        $this->shared = self::store();
        $this->bus = new InProcessBus();
    }

    public function testAReadIsServedFromTheNodesCopyUntilItsTtlAndThenFromTheStore(): void
    {
        $a = $this->node('a', ttl: 1);
        $this->shared->set('cache:k', ['v' => 'one']);
        self::assertSame('one', $a->get('k'));
        $this->shared->set('cache:k', ['v' => 'two']); // behind the cache's back: no invalidation sent
        self::assertSame('one', $a->get('k'), 'the copy, not a round trip to the store');
        sleep(2);
        self::assertSame('two', $a->get('k'), 'never older than the copy\'s TTL');
    }

    public function testAWriteOrDeleteOnOneNodeDropsTheOtherNodesCopy(): void
    {
        $a = $this->node('a');
        $b = $this->node('b');
        $a->set('k', 'one');
        self::assertSame('one', $b->get('k'));
        $a->set('k', 'two');
        $this->deliver();
        self::assertSame('two', $b->get('k'));
        $a->delete('k');
        $this->deliver();
        self::assertNull($b->get('k'));
    }

    public function testATagInvalidatedOnOneNodeMakesTheOtherNodesCopiesMiss(): void
    {
        $a = $this->node('a');
        $b = $this->node('b');
        $a->set('post:1', 'title', tags: ['posts']);
        $a->set('user:1', 'name', tags: ['users']);
        self::assertSame('title', $b->get('post:1'));
        self::assertSame('name', $b->get('user:1'));
        $a->invalidateTags('posts');
        $this->deliver();
        self::assertNull($b->get('post:1'));
        self::assertSame('name', $b->get('user:1'));
    }

    public function testWithASecretOnlySignedInvalidationsAreApplied(): void
    {
        $a = $this->node('a', secret: 's3cret');
        $b = $this->node('b', secret: 's3cret');
        $a->set('k', 'one');
        self::assertSame('one', $b->get('k'));
        $a->set('k', 'two');
        $this->deliver();
        self::assertSame('two', $b->get('k'), 'signed with the shared secret: applied');

        $near = new NearCache(self::store(), $this->bus, 'c', secret: 's3cret');
        foreach (["-\n{\"n\":\"x\",\"k\":[\"k\"]}", hash_hmac('sha256', '{"n":"x","k":["k"]}', 'other') . "\n{\"n\":\"x\",\"k\":[\"k\"]}", 'garbage'] as $forged) {
            try {
                $near->receive($forged);
                self::fail('a forged invalidation was applied');
            } catch (StoreException $e) {
                self::assertStringContainsString('without a valid signature', $e->getMessage());
            }
        }
    }

    private function node(string $id, int $ttl = 5, ?string $secret = null): Cache
    {
        return new Cache($this->shared, near: new NearCache(self::store(), $this->bus, $id, $ttl, $secret));
    }

    /** Runs the loop until the bus has delivered what was published. */
    private function deliver(): void
    {
        Loop::run();
    }

    private static function store(): ApcuStore
    {
        return new ApcuStore('kiln.test:' . bin2hex(random_bytes(6)) . ':');
    }
}
