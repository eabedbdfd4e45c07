<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Scale;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RedisServer;
use Kiln\Tests\Support\SseClient;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\TestCase;

/**
 * SSE over nodes sharing one Redis: an event published on one node reaches a stream on another, ids are one
 * sequence for all nodes, and a client reconnecting to a node that never followed the topic gets what it missed
 * from its Last-Event-ID.
 */
final class EventsAcrossNodesTest extends TestCase
{
    private const APP = __DIR__ . '/../../../examples/realtime/app.php';

    public function testEventsSpanNodesWithOneIdSequenceAndReplayOnAnotherNode(): void
    {
        $redis = RedisServer::start();
        /** @var list<KilnProcess> $nodes */
        $nodes = [];
        try {
            for ($n = 0; $n < 3; $n++) {
                $nodes[] = KilnProcess::start(self::APP, ['--workers=2', '--redis=' . $redis->uri()]);
            }
            $topic = 'news' . bin2hex(random_bytes(3));
            $stream = new SseClient($nodes[1]->host(), $nodes[1]->port(), "/events/$topic");
            self::assertSame(200, $stream->status);
            // The stream's worker follows the topic at Redis shortly after the head went out: publish until it arrives.
            $deadline = microtime(true) + 10.0;
            do {
                $published = self::publish($nodes[0], $topic, 'one');
            } while (!$stream->waitFor(static fn(SseParser $p): bool => $p->events() !== [], 0.3) && microtime(true) < $deadline);
            $first = $stream->parser->events()[0] ?? null;
            self::assertNotNull($first, 'an event published on node 0 reached a stream on node 1');
            self::assertSame('one', $first['data']);
            $stream->close();
            $lastSeen = (int) $first['id'];
            // Attempts that went out before the subscription counted too: the sequence is where it is now.
            self::assertSame($lastSeen, $published, 'the stream got the last of the attempts');

            self::assertSame($lastSeen + 1, self::publish($nodes[0], $topic, 'two'));
            self::assertSame($lastSeen + 2, self::publish($nodes[1], $topic, 'three'), 'one id sequence for every node');

            // Node 2 never followed the topic: the replay comes from Redis.
            $again = new SseClient($nodes[2]->host(), $nodes[2]->port(), "/events/$topic", ['Last-Event-ID' => (string) $lastSeen]);
            self::assertTrue($again->waitFor(static fn(SseParser $p): bool => \count($p->events()) >= 2), 'the missed events were replayed');
            $replayed = array_map(static fn(array $e): array => [$e['id'], $e['data']], \array_slice($again->parser->events(), 0, 2));
            self::assertSame([[(string) ($lastSeen + 1), 'two'], [(string) ($lastSeen + 2), 'three']], $replayed);
            $again->close();
        } finally {
            foreach ($nodes as $node) {
                $node->stop();
            }
            $redis->stop();
        }
    }

    /**
     * Redis restarted without its data (no persistence): the topic's ids begin again at 1. A stream that had been
     * replayed up to 5 (it reconnected with a Last-Event-ID) still gets the events of the new sequence, and those
     * published before its worker followed the topic again are read from Redis once it does.
     */
    public function testAStreamGoesOnAfterRedisRestartsWithoutItsData(): void
    {
        $redis = RedisServer::start();
        $node = KilnProcess::start(self::APP, ['--workers=1', '--redis=' . $redis->uri() . '?connect_timeout=0.5&timeout=1']);
        try {
            for ($i = 1; $i <= 5; $i++) {
                self::assertSame($i, self::publish($node, 'restart', "old $i"));
            }
            $stream = new SseClient($node->host(), $node->port(), '/events/restart', ['Last-Event-ID' => '2']);
            self::assertTrue($stream->waitFor(static fn(SseParser $p): bool => \count($p->events()) >= 3), 'replayed 3 to 5');

            $redis->kill();
            $redis->restart();
            $published = [];
            $deadline = microtime(true) + 20.0;
            for ($i = 1; $i <= 3; $i++) {
                // 503 until the worker's store and bus find Redis again; the first events may come before its
                // subscription is back.
                while (SseClient::post($node->host(), $node->port(), '/publish/restart', "new $i")[0] !== 200) {
                    self::assertLessThan($deadline, microtime(true), 'publishing works again after Redis restarted');
                    usleep(50_000);
                }
                $published[] = "new $i";
            }
            $expected = ['old 3', 'old 4', 'old 5', ...$published];
            $stream->waitFor(static fn(SseParser $p): bool => \count($p->events()) >= \count($expected), 15.0);
            self::assertSame($expected, array_column($stream->parser->events(), 'data'), $node->log());
            self::assertSame(['3', '4', '5', '1', '2', '3'], array_column($stream->parser->events(), 'id'));
            $stream->close();
        } finally {
            $node->stop();
            $redis->stop();
        }
    }

    /** POST /publish/{topic}; returns the event's id. */
    private static function publish(KilnProcess $node, string $topic, string $body): int
    {
        [$status, $answer] = SseClient::post($node->host(), $node->port(), "/publish/$topic", $body);
        $decoded = json_decode($answer, true);
        self::assertIsArray($decoded, "publish answered $status: $answer");
        return (int) $decoded['id'];
    }
}
