<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Store;

use Kiln\Redis\RedisConfig;
use Kiln\Store\RedisStore;
use Kiln\Store\Store;
use Kiln\Store\StoreException;
use Kiln\Tests\Support\RedisServer;
use Kiln\Tests\Unit\Store\StoreTestCase;

/** The Store contract on Redis, and what other Redis clients see of its keys. */
final class RedisStoreTest extends StoreTestCase
{
    use RedisBackend {
        tearDownAfterClass as stopRedis;
    }

    /** @var list<RedisServer> */
    private array $small = [];

    public static function tearDownAfterClass(): void
    {
        self::stopRedis();
    }

    protected function tearDown(): void
    {
        foreach ($this->small as $server) {
            $server->stop();
        }
    }

    protected function createSmallStore(): array
    {
        // A Redis of its own whose maxmemory leaves room for about two hundred of the test's keys (about 300 bytes each), evicting the
        // soonest to expire first (volatile-ttl), as the node-local stores do.
        $server = $this->small[] = RedisServer::start();
        $store = RedisStore::connect(RedisConfig::fromUri($server->uri()));
        $store->count(); // connected: its client's memory is counted before the limit is set
        preg_match('/^used_memory:(\d+)/m', $server->cli('INFO', 'memory'), $m);
        $server->cli('CONFIG', 'SET', 'maxmemory', (string) ((int) $m[1] + 64 * 1024));
        $server->cli('CONFIG', 'SET', 'maxmemory-policy', 'volatile-ttl');
        return [$store, 450];
    }

    public function testOtherClientsSeeIntegersAsNumbersAndStringsAsTheyAre(): void
    {
        self::$redis ??= RedisServer::start();
        $store = RedisStore::connect(RedisConfig::fromUri(self::$redis->uri()));
        $id = bin2hex(random_bytes(8));
        $store->set("PHPREDIS_SESSION:$id", 'user|s:5:"alice";');
        $store->increment("hits:$id", 5);
        $store->set("text:$id", '42');
        self::assertSame('user|s:5:"alice";', self::$redis->cli('GET', "PHPREDIS_SESSION:$id"), 'a session, byte for byte as php-redis writes it');
        self::assertSame('5', self::$redis->cli('GET', "hits:$id"));
        self::assertSame('6', self::$redis->cli('INCR', "hits:$id"), 'a counter other clients can increment');
        self::assertSame(6, $store->get("hits:$id"));
        self::assertSame('42', $store->get("text:$id"), 'a string of digits stays a string');
    }

    public function testTheLogSaysOnceThatRedisStoppedAnsweringAndOnceThatItAnswersAgain(): void
    {
        $server = $this->small[] = RedisServer::start();
        $logged = [];
        $store = RedisStore::connect(RedisConfig::fromUri($server->uri() . '?connect_timeout=0.5&timeout=1'), 'kiln-test:', static function (string $level, string $message) use (&$logged): void {
            $logged[] = "$level: $message";
        });
        $store->set('k', 1);
        $server->kill();
        $failures = 0;
        foreach (range(1, 3) as $_) {
            try {
                $store->get('k');
            } catch (StoreException) {
                $failures++;
            }
        }
        self::assertSame(3, $failures);
        self::assertCount(1, $logged, implode("\n", $logged));
        self::assertMatchesRegularExpression('/^warning: Store \(Redis\): Redis is unreachable \(.+\): what uses the Store .* fails until it answers again$/', $logged[0]);
        $server->restart();
        $deadline = microtime(true) + 10;
        while (true) {
            try {
                $store->get('k');
                break;
            } catch (StoreException $e) {
                if (microtime(true) > $deadline) {
                    throw $e;
                }
                usleep(100_000);
            }
        }
        self::assertCount(2, $logged, implode("\n", $logged));
        self::assertMatchesRegularExpression('/^info: Store \(Redis\): Redis answers again, \d+\.\d s after it was found unreachable$/', $logged[1]);
    }
}
