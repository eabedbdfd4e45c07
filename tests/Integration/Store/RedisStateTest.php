<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Store;

use Kiln\Redis\RedisConfig;
use Kiln\Store\RedisStore;
use Kiln\Store\SharedState;
use Kiln\Store\StoreState;
use Kiln\Tests\Support\RedisServer;
use Kiln\Tests\Unit\Store\SharedStateTestCase;

/** The SharedState contract on Redis (StoreState over a RedisStore): what SSE event ids use with --redis. */
final class RedisStateTest extends SharedStateTestCase
{
    private static ?RedisServer $redis = null;

    public static function tearDownAfterClass(): void
    {
        self::$redis?->stop();
        self::$redis = null;
    }

    protected function createState(): SharedState
    {
        self::$redis ??= RedisServer::start();
        return new StoreState(RedisStore::connect(RedisConfig::fromUri(self::$redis->uri())), 'kiln-test:' . bin2hex(random_bytes(6)) . ':');
    }
}
