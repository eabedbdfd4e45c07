<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Redis;

use Kiln\Redis\ClusterSlot;
use Kiln\Redis\RedisClient;
use Kiln\Redis\Subscriber;
use Kiln\Tests\Support\RedisServer;

/** A 3-master Cluster made here with redis-cli --cluster create; a slot moved by hand gives ASK, then MOVED. */
final class ClusterTest extends RedisTestCase
{
    /** @var list<RedisServer> */
    private array $nodes = [];

    protected function setUp(): void
    {
        parent::setUp();
        $this->makeCluster(3, 0);
    }

    /** Starts $masters × (1 + $replicasEach) nodes and joins them with redis-cli --cluster create. */
    private function makeCluster(int $masters, int $replicasEach): void
    {
        foreach ($this->nodes as $node) {
            $node->stop();
        }
        $this->nodes = [];
        for ($i = 0; $i < $masters * (1 + $replicasEach); $i++) {
            $this->nodes[] = RedisServer::start(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000']);
        }
        $addresses = array_map(static fn(RedisServer $n): string => "127.0.0.1:{$n->port}", $this->nodes);
        $out = $this->nodes[0]->cli('--cluster', 'create', ...[...$addresses, '--cluster-replicas', (string) $replicasEach, '--cluster-yes']);
        self::assertStringContainsString('All 16384 slots covered', $out, $out);
        $deadline = microtime(true) + 30.0;
        foreach ($this->nodes as $node) {
            while (!str_contains($node->cli('CLUSTER', 'INFO'), 'cluster_state:ok')) {
                self::assertLessThan($deadline, microtime(true), 'the Cluster did not become ok');
                usleep(50_000);
            }
        }
    }

    protected function tearDown(): void
    {
        foreach ($this->nodes as $node) {
            $node->stop();
        }
        $this->nodes = [];
    }

    public function testKeysAreRoutedBySlotAndASlotMovedMidwayIsFollowedThroughAskThenMoved(): void
    {
        $client = RedisClient::fromUri("redis+cluster://127.0.0.1:{$this->nodes[0]->port}");
        self::inLoop(static function () use ($client): void {
            for ($i = 0; $i < 60; $i++) {
                self::assertTrue($client->set("key:$i", "v$i"));
            }
            for ($i = 0; $i < 60; $i++) {
                self::assertSame("v$i", $client->get("key:$i"));
            }
            $client->set('foo', 'bar');
        });
        foreach ($this->nodes as $node) {
            self::assertGreaterThan(0, (int) $node->cli('DBSIZE'), 'every master holds some keys');
        }

        $askingPipeline = RedisClient::fromUri("redis+cluster://127.0.0.1:{$this->nodes[1]->port}");
        $movedPipeline = RedisClient::fromUri("redis+cluster://127.0.0.1:{$this->nodes[2]->port}");
        self::inLoop(static function () use ($askingPipeline, $movedPipeline): void {
            self::assertSame('bar', $askingPipeline->get('foo'), 'it knows the slot map before the move');
            self::assertSame('bar', $movedPipeline->get('foo'));
        });
        $slot = ClusterSlot::of('foo');
        self::assertSame((string) $slot, $this->nodes[0]->cli('CLUSTER', 'KEYSLOT', 'foo'));
        [$source, $target] = $this->ownerAndAnother($slot);
        $sourceId = $source->cli('CLUSTER', 'MYID');
        $targetId = $target->cli('CLUSTER', 'MYID');
        self::assertSame('OK', $target->cli('CLUSTER', 'SETSLOT', (string) $slot, 'IMPORTING', $sourceId));
        self::assertSame('OK', $source->cli('CLUSTER', 'SETSLOT', (string) $slot, 'MIGRATING', $targetId));
        self::assertSame('OK', $source->cli('MIGRATE', '127.0.0.1', (string) $target->port, '', '0', '5000', 'KEYS', 'foo'));

        self::assertSame('bar', self::inLoop(static fn(): ?string => $client->get('foo')), 'ASK: the key is on the importing node');
        self::assertMatchesRegularExpression('/cmdstat_asking:calls=[1-9]/', $target->cli('INFO', 'commandstats'));
        self::assertSame(['bar', 3], self::inLoop(static fn(): array => $askingPipeline->pipeline([['GET', 'foo'], ['STRLEN', 'foo']])), 'a pipeline follows ASK');

        foreach ($this->nodes as $node) {
            self::assertSame('OK', $node->cli('CLUSTER', 'SETSLOT', (string) $slot, 'NODE', $targetId));
        }
        $rejectedBefore = self::rejectedGets($source);
        self::assertSame('bar', self::inLoop(static fn(): ?string => $client->get('foo')), 'MOVED: followed to the new owner');
        self::assertSame($rejectedBefore + 1, self::rejectedGets($source), 'the old owner answered MOVED once');
        self::assertSame('bar', self::inLoop(static fn(): ?string => $client->get('foo')));
        self::assertSame($rejectedBefore + 1, self::rejectedGets($source), 'the client learned the new owner');
        self::assertSame(['bar', 3], self::inLoop(static fn(): array => $movedPipeline->pipeline([['GET', 'foo'], ['STRLEN', 'foo']])), 'a pipeline follows MOVED');
        self::assertSame($rejectedBefore + 2, self::rejectedGets($source), 'the pipeline went to the old owner first');
        $client->close();
        $askingPipeline->close();
        $movedPipeline->close();
    }

    public function testShardedPubSubReachesASubscriberOnTheChannelsOwner(): void
    {
        $uri = "redis+cluster://127.0.0.1:{$this->nodes[0]->port}";
        $client = RedisClient::fromUri($uri);
        $subscriber = Subscriber::fromUri($uri);
        $received = [];
        self::inLoop(static function () use ($client, $subscriber, &$received): void {
            foreach (['orders', 'users', 'carts'] as $channel) {
                $subscriber->ssubscribe($channel, static function (string $message, string $channel) use (&$received): void {
                    $received[] = "$channel:$message";
                });
            }
            foreach (['orders', 'users', 'carts'] as $channel) {
                self::assertSame(1, $client->command('SPUBLISH', $channel, 'hi'));
            }
            self::eventually(static function () use (&$received): void {
                if (\count($received) < 3) {
                    throw new \RuntimeException('not yet');
                }
            });
            $subscriber->close();
        });
        sort($received);
        self::assertSame(['carts:hi', 'orders:hi', 'users:hi'], $received);
    }

    public function testAFailoverIsFollowedToThePromotedReplica(): void
    {
        $this->makeCluster(3, 1);
        $client = RedisClient::fromUri("redis+cluster://127.0.0.1:{$this->nodes[0]->port}?timeout=2&connect_timeout=1");
        self::inLoop(static function () use ($client): void {
            self::assertTrue($client->set('foo', 'before'));
        });
        $slot = ClusterSlot::of('foo');
        $owner = null;
        foreach ($this->nodes as $node) {
            if (str_contains($node->cli('ROLE'), 'master') && $node->cli('CLUSTER', 'COUNTKEYSINSLOT', (string) $slot) === '1') {
                $owner = $node;
            }
        }
        self::assertNotNull($owner, 'a master holds foo');
        $deadline = microtime(true) + 20.0;
        while (preg_match('/master_repl_offset:(\d+)/', $info = $owner->cli('INFO', 'replication'), $m) !== 1 || !str_contains($info, "offset={$m[1]},")) {
            self::assertLessThan($deadline, microtime(true), "the replica did not catch up: $info");
            usleep(50_000);
        }
        $ownerId = $owner->cli('CLUSTER', 'MYID');
        $subscriber = Subscriber::fromUri("redis+cluster://127.0.0.1:{$this->nodes[0]->port}?timeout=2&connect_timeout=1");
        $received = [];
        $resubscribed = 0;
        $subscriber->onResubscribed(static function () use (&$resubscribed): void {
            $resubscribed++;
        });
        self::inLoop(static function () use ($subscriber, &$received): void {
            $subscriber->ssubscribe('foo', static function (string $message) use (&$received): void {
                $received[] = $message;
            });
        });
        $owner->kill();
        $value = self::inLoop(static fn(): ?string => self::eventually(static function () use ($client): ?string {
            $client->set('after', 'failover');

            return $client->get('foo');
        }, 40.0), 60.0);
        self::assertSame('before', $value, 'the replica of the dead master serves its keys now');
        self::inLoop(static function () use ($client, &$received, &$resubscribed): void {
            self::eventually(static function () use ($client, &$received, &$resubscribed): void {
                if ($resubscribed === 0) {
                    throw new \RuntimeException('the shard subscription has not moved yet');
                }
                $client->command('SPUBLISH', 'foo', 'after failover');
                if (!\in_array('after failover', $received, true)) {
                    throw new \RuntimeException('no message yet: ' . json_encode($received));
                }
            }, 30.0);
        }, 40.0);
        $subscriber->close();
        $survivor = $this->nodes[0] === $owner ? $this->nodes[1] : $this->nodes[0];
        self::assertStringContainsString("$ownerId", $survivor->cli('CLUSTER', 'NODES'));
        self::assertMatchesRegularExpression('/' . $ownerId . '[^\n]*master,fail/', $survivor->cli('CLUSTER', 'NODES'), 'the old master is marked failed');
        $client->close();
    }

    /** @return array{RedisServer, RedisServer} the master owning $slot and another master */
    private function ownerAndAnother(int $slot): array
    {
        foreach ($this->nodes as $i => $node) {
            if ($node->cli('CLUSTER', 'COUNTKEYSINSLOT', (string) $slot) === '1') {
                return [$node, $this->nodes[($i + 1) % 3]];
            }
        }
        self::fail("No node holds slot $slot");
    }

    private static function rejectedGets(RedisServer $node): int
    {
        preg_match('/cmdstat_get:.*rejected_calls=(\d+)/', $node->cli('INFO', 'commandstats'), $m);

        return (int) ($m[1] ?? 0);
    }
}
