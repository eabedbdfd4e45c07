<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Redis;

use Kiln\Redis\Endpoint;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\RedisMode;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class RedisConfigTest extends TestCase
{
    public function testAPlainUriGivesHostPortAndDefaults(): void
    {
        $config = RedisConfig::fromUri('redis://cache.internal:6380');
        self::assertEquals([new Endpoint('cache.internal', 6380)], $config->endpoints);
        self::assertSame(RedisMode::Single, $config->mode);
        self::assertNull($config->password);
        self::assertSame(0, $config->database);
        self::assertFalse($config->tls);
    }

    public function testUserPasswordDatabaseAndOptionsAreRead(): void
    {
        $config = RedisConfig::fromUri('rediss://app:s%40cret@10.0.0.5/3?timeout=1.5&connect_timeout=0.5&pool=4&protocol=3&name=kiln&verify_peer=0&cafile=/etc/ca.pem');
        self::assertSame('app', $config->username);
        self::assertSame('s@cret', $config->password);
        self::assertSame(3, $config->database);
        self::assertTrue($config->tls);
        self::assertFalse($config->verifyPeer);
        self::assertSame('/etc/ca.pem', $config->cafile);
        self::assertSame(1.5, $config->commandTimeout);
        self::assertSame(0.5, $config->connectTimeout);
        self::assertSame(4, $config->poolSize);
        self::assertSame(3, $config->protocol);
        self::assertSame('kiln', $config->clientName);
        self::assertSame(15.0, $config->healthCheckInterval, 'the default');
        self::assertSame(0.0, RedisConfig::fromUri('redis://h?health_check=0')->healthCheckInterval);
        self::assertEquals([new Endpoint('10.0.0.5', 6379)], $config->endpoints);
    }

    public function testAPasswordAloneMayComeWithOrWithoutAColon(): void
    {
        self::assertSame([null, 'pw'], [RedisConfig::fromUri('redis://:pw@h')->username, RedisConfig::fromUri('redis://:pw@h')->password]);
        self::assertSame([null, 'pw'], [RedisConfig::fromUri('redis://pw@h')->username, RedisConfig::fromUri('redis://pw@h')->password]);
    }

    public function testAUnixSocketPathIsAnEndpointWithoutPort(): void
    {
        $config = RedisConfig::fromUri('redis:///run/redis/redis.sock?db=2');
        self::assertTrue($config->endpoints[0]->isUnix());
        self::assertSame('unix:///run/redis/redis.sock', $config->endpoints[0]->uri());
        self::assertSame(2, $config->database);
    }

    public function testASentinelUriNamesSentinelsMasterAndDatabase(): void
    {
        $config = RedisConfig::fromUri('redis+sentinel://:pw@s1,s2:26380,[::1]:26381/mymaster/2?sentinel_password=sp');
        self::assertSame(RedisMode::Sentinel, $config->mode);
        self::assertEquals([new Endpoint('s1', 26379), new Endpoint('s2', 26380), new Endpoint('::1', 26381)], $config->endpoints);
        self::assertSame('mymaster', $config->masterName);
        self::assertSame(2, $config->database);
        self::assertSame('pw', $config->password);
        self::assertSame('sp', $config->sentinelPassword);
        self::assertSame('tcp://[::1]:26381', $config->endpoints[2]->uri());
    }

    public function testAClusterUriListsItsSeedNodes(): void
    {
        $config = RedisConfig::fromUri('rediss+cluster://n1:7000,n2:7001');
        self::assertSame(RedisMode::Cluster, $config->mode);
        self::assertTrue($config->tls);
        self::assertCount(2, $config->endpoints);
        $node = $config->forEndpoint(new Endpoint('n3', 7002));
        self::assertSame(RedisMode::Single, $node->mode);
        self::assertTrue($node->tls);
    }

    /** @return iterable<string, array{string}> */
    public static function misuse(): iterable
    {
        yield 'another scheme' => ['http://localhost'];
        yield 'a database that is no number' => ['redis://h/abc'];
        yield 'a sentinel URI without master' => ['redis+sentinel://h:26379'];
        yield 'a cluster with a database' => ['redis+cluster://h:7000/1'];
        yield 'protocol 4' => ['redis://h?protocol=4'];
        yield 'an empty pool' => ['redis://h?pool=0'];
        yield 'a port out of range' => ['redis://h:70000'];
    }

    #[DataProvider('misuse')]
    public function testAWrongUriIsAValueErrorThatSaysWhy(string $uri): void
    {
        $this->expectException(\ValueError::class);
        RedisConfig::fromUri($uri);
    }
}
