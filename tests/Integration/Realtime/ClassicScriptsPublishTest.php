<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Realtime;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawWebSocket;
use Kiln\Tests\Support\SseClient;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\TestCase;

/**
 * A sequential-tier script and an isolated-tier script (php-cgi) publish to a topic and a room: the WebSocket
 * members and the SSE clients on both of 2 workers get each message once, in order.
 */
final class ClassicScriptsPublishTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/script-publish/app.php';

    public function testSequentialAndIsolatedScriptsReachWebSocketMembersAndSseClientsOnBothWorkers(): void
    {
        $server = KilnProcess::start(self::APP, ['--workers=2', '--pool-size=1']);
        try {
            $name = 'dash-' . bin2hex(random_bytes(3));
            $members = $streams = [];
            $memberWorkers = $streamWorkers = [];
            for ($i = 0; $i < 40 && (\count($memberWorkers) < 2 || \count($streamWorkers) < 2); $i++) {
                $member = new RawWebSocket($server, "/ws/rooms/$name");
                $hello = $member->readFrame()['payload'] ?? '';
                self::assertMatchesRegularExpression('/^worker \d+$/', $hello);
                $members[] = $member;
                $memberWorkers[$hello] = true;
                $stream = new SseClient($server->host(), $server->port(), "/events/$name");
                $streams[] = $stream;
                $streamWorkers[$stream->readWorkerPid()] = true;
            }
            self::assertCount(2, $memberWorkers, 'room members on both workers');
            self::assertCount(2, $streamWorkers, 'event streams on both workers');

            foreach (['/publish.php' => 'from the sequential tier', '/iso/publish.php' => 'from the isolated tier'] as $script => $text) {
                $reply = HttpClient::get($server->baseUrl() . "$script?to=$name&m=" . rawurlencode($text), [], 15.0);
                self::assertSame('published', $reply['body'], "$script: " . $server->log());
            }
            foreach ($members as $n => $member) {
                self::assertSame('from the sequential tier', $member->readFrame()['payload'] ?? null, "member $n");
                self::assertSame('from the isolated tier', $member->readFrame()['payload'] ?? null, "member $n");
            }
            foreach ($streams as $n => $stream) {
                self::assertTrue($stream->waitFor(static fn(SseParser $p): bool => \count($p->events()) >= 2), "stream $n");
                self::assertSame(
                    ['from the sequential tier', 'from the isolated tier'],
                    array_column($stream->parser->events(), 'data'),
                    "stream $n",
                );
            }
        } finally {
            $server->stop();
        }
    }
}
