<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Store;

use Kiln\Redis\RedisConfig;
use Kiln\Store\RedisStore;
use Kiln\Store\Store;
use Kiln\Tests\Support\RedisServer;

/**
 * Contract tests on a RedisStore: one real redis-server per test class (started on first use, stopped by PID
 * when the class is done), each store under a prefix of its own.
 */
trait RedisBackend
{
    private static ?RedisServer $redis = null;

    public static function tearDownAfterClass(): void
    {
        self::$redis?->stop();
        self::$redis = null;
    }

    protected function createStore(): Store
    {
        self::$redis ??= RedisServer::start();
        return RedisStore::connect(RedisConfig::fromUri(self::$redis->uri()), 'kiln-test:' . bin2hex(random_bytes(6)) . ':');
    }
}
