<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Redis;

use Kiln\Redis\RedisClient;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\RedisException;
use Kiln\Redis\SyncRedisClient;
use Kiln\Tests\Support\RedisServer;

/** A master, its replica and a Sentinel started here; the client follows the failover after kill -9 of the master. */
final class SentinelTest extends RedisTestCase
{
    public function testTheClientFindsTheMasterThroughSentinelAndFollowsAFailover(): void
    {
        $master = RedisServer::start();
        $replica = RedisServer::start(['--replicaof', '127.0.0.1', (string) $master->port]);
        self::waitUntil(static fn(): bool => str_contains($replica->cli('INFO', 'replication'), 'master_link_status:up'), 'the replica syncs');
        $sentinel = RedisServer::sentinel('kiln', $master->port);
        self::waitUntil(static fn(): bool => str_contains($sentinel->cli('SENTINEL', 'REPLICAS', 'kiln'), (string) $replica->port), 'the Sentinel sees the replica');

        $client = new RedisClient(RedisConfig::fromUri("redis+sentinel://127.0.0.1:{$sentinel->port}/kiln?timeout=2&connect_timeout=1"));
        self::inLoop(static function () use ($client, $master): void {
            self::assertSame(['port', (string) $master->port], $client->command('CONFIG', 'GET', 'port'));
            $client->set('before', 'failover');
            self::assertSame(1, $client->blockingCommand(2.0, ['WAIT', 1, 2000]), 'the replica has the write');
        });
        $sync = SyncRedisClient::fromUri("redis+sentinel://127.0.0.1:{$sentinel->port}/kiln?timeout=2&connect_timeout=1");
        self::assertSame('failover', $sync->command('GET', 'before'), 'the synchronous client finds the master too');
        $master->kill();
        $port = self::inLoop(static fn(): mixed => self::eventually(static function () use ($client): mixed {
            $client->set('after', 'failover');

            return $client->command('CONFIG', 'GET', 'port');
        }, 40.0), 60.0);
        self::assertSame(['port', (string) $replica->port], $port, 'the promoted replica is the master now');
        self::assertSame('failover', self::inLoop(static fn(): ?string => $client->get('before')));
        self::assertStringContainsString('role:master', $replica->cli('INFO', 'replication'));
        $deadline = microtime(true) + 10.0;
        while (true) {
            try {
                self::assertSame(['port', (string) $replica->port], $sync->command('CONFIG', 'GET', 'port'));
                break;
            } catch (RedisException $e) {
                self::assertLessThan($deadline, microtime(true), 'the synchronous client did not follow: ' . $e->getMessage());
                usleep(100_000);
            }
        }
        $sync->close();
        $client->close();
    }

    /** @param \Closure(): bool $condition */
    private static function waitUntil(\Closure $condition, string $what, float $timeout = 20.0): void
    {
        $deadline = microtime(true) + $timeout;
        while (!$condition()) {
            if (microtime(true) > $deadline) {
                self::fail("Waited in vain: $what");
            }
            usleep(50_000);
        }
    }
}
