<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Scale;

use Kiln\Store\RedisBus;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawWebSocket;
use Kiln\Tests\Support\RedisServer;
use PHPUnit\Framework\TestCase;

/**
 * Three Kiln nodes (2 workers each) given the same --redis: a room's members on every node get its messages
 * once; a node killed with SIGKILL leaves the others working; Redis restarted, everything recovers by itself.
 */
final class RoomsAcrossNodesTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/websocket/app.php';

    private const CHANNEL = RedisBus::PREFIX . 'room:lobby';

    public function testARoomSpansNodesSurvivesANodeKilledAndRecoversFromARedisRestart(): void
    {
        $redis = RedisServer::start();
        /** @var list<KilnProcess> $nodes */
        $nodes = [];
        try {
            for ($n = 0; $n < 3; $n++) {
                $nodes[] = KilnProcess::start(self::APP, ['--workers=2', '--redis=' . $redis->uri()]);
            }
            self::assertStringContainsString('node bus and Store: Redis', $nodes[0]->log());
            // Two members per node; the processes holding them each follow the room's channel at Redis.
            $members = [];
            $pids = [];
            foreach ($nodes as $n => $node) {
                for ($i = 0; $i < 2; $i++) {
                    $member = new RawWebSocket($node, '/ws/rooms/lobby');
                    $welcome = json_decode($member->readFrame()['payload'] ?? '', true);
                    self::assertIsArray($welcome);
                    self::assertIsInt($welcome['pid']);
                    $members[] = ['node' => $n, 'socket' => $member];
                    $pids[$welcome['pid']] = $n;
                }
            }
            self::waitForSubscribers($redis, \count($pids));

            $members[0]['socket']->send(RawWebSocket::frame(0x1, 'hello'));
            self::assertEveryMemberGets($members, 'lobby: hello');
            $members[5]['socket']->send(RawWebSocket::frame(0x1, 'from the third node'));
            self::assertEveryMemberGets($members, 'lobby: from the third node');

            // kill -9 the third node, workers and all: the room carries on through the other two.
            foreach ([...$nodes[2]->workerPids(), $nodes[2]->pid()] as $pid) {
                posix_kill($pid, SIGKILL);
            }
            $members = array_values(array_filter($members, static fn(array $m): bool => $m['node'] !== 2));
            $alive = \count(array_filter($pids, static fn(int $node): bool => $node !== 2));
            self::waitForSubscribers($redis, $alive);
            $members[2]['socket']->send(RawWebSocket::frame(0x1, 'after the kill'));
            self::assertEveryMemberGets($members, 'lobby: after the kill');

            // Redis goes away and comes back: nothing is restarted, the subscriptions return by themselves.
            $redis->kill();
            $redis->restart();
            self::waitForSubscribers($redis, $alive, 20.0);
            $deadline = microtime(true) + 20.0;
            // Each worker's publisher learns that Redis came back within a second of it; until then it refuses.
            while (true) {
                try {
                    $members[0]['socket']->send(RawWebSocket::frame(0x1, 'back'));
                    $frame = $members[0]['socket']->readFrame(2.0);
                } catch (\RuntimeException) {
                    $frame = null;
                }
                if (($frame['payload'] ?? null) === 'lobby: back') {
                    break;
                }
                self::assertLessThan($deadline, microtime(true), 'the room works again after Redis restarted');
                // A refused publish closed that member's connection (1011): open a new one.
                $members[0]['socket'] = new RawWebSocket($nodes[0], '/ws/rooms/lobby');
                $members[0]['socket']->readFrame();
            }
            foreach (\array_slice($members, 1) as $m) {
                self::assertContains('lobby: back', self::drain($m['socket']), 'node ' . $m['node']);
            }
        } finally {
            foreach ($nodes as $node) {
                if ($node->isRunning()) {
                    $node->stop();
                }
            }
            $redis->stop();
        }
    }

    /** @param list<array{node: int, socket: RawWebSocket}> $members */
    private static function assertEveryMemberGets(array $members, string $payload): void
    {
        foreach ($members as $i => $m) {
            self::assertSame($payload, $m['socket']->readFrame()['payload'] ?? null, "member $i on node {$m['node']}");
        }
        // Once each: a ping answered next means nothing else was queued before it.
        foreach ($members as $i => $m) {
            $m['socket']->send(RawWebSocket::frame(0x9, 'marker'));
            self::assertSame(0xA, $m['socket']->readFrame()['opcode'] ?? null, "member $i got '$payload' once");
        }
    }

    /** @return list<string> the text payloads that arrive within a short while */
    private static function drain(RawWebSocket $socket): array
    {
        $payloads = [];
        try {
            while (($frame = $socket->readFrame(1.0)) !== null) {
                $payloads[] = $frame['payload'];
            }
        } catch (\RuntimeException) {
            // nothing more within the second
        }
        return $payloads;
    }

    private static function waitForSubscribers(RedisServer $redis, int $count, float $timeout = 10.0): void
    {
        $deadline = microtime(true) + $timeout;
        do {
            $reply = $redis->cli('PUBSUB', 'NUMSUB', self::CHANNEL);
            if (preg_match('/(\d+)\s*$/', $reply, $m) === 1 && (int) $m[1] === $count) {
                return;
            }
            usleep(50_000);
        } while (microtime(true) < $deadline);
        self::fail("Redis did not count $count subscribers of " . self::CHANNEL . " within $timeout s: $reply");
    }
}
