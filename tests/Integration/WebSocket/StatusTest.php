<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\WebSocket;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use Kiln\Tests\Support\RawWebSocket;
use PHPUnit\Framework\TestCase;

final class StatusTest extends TestCase
{
    public function testKilnStatusCountsTheOpenWebSocketConnectionsOfEachWorker(): void
    {
        $pidFile = sys_get_temp_dir() . '/kiln-test-' . bin2hex(random_bytes(4)) . '.pid';
        $kiln = KilnProcess::start(IndependentClientsTest::APP, ["--pid-file=$pidFile", '--workers=1']);
        try {
            $open = [new RawWebSocket($kiln, '/ws/echo'), new RawWebSocket($kiln, '/ws/echo'), new RawWebSocket($kiln, '/ws/echo')];
            self::assertSame(3, self::websocketsOnceSettled($pidFile, 3));
            $open[0]->send(RawWebSocket::frame(0x8, pack('n', 1000)));
            self::assertSame(1000, $open[0]->readUntilClose()[0]);
            self::assertSame(2, self::websocketsOnceSettled($pidFile, 2));
            [$code, $stdout] = KilnProcess::run(['status', "--pid-file=$pidFile"]);
            self::assertSame(0, $code);
            self::assertMatchesRegularExpression('~^  worker 1  pid \d+  ready  requests \d+  in flight \d+  http \d+  websockets 2  ~m', $stdout);
        } finally {
            $kiln->stop();
        }
    }

    public function testWebSocketConnectionsCountTowardsTheConnectionCap(): void
    {
        $kiln = KilnProcess::start(IndependentClientsTest::APP, ['--workers=1', '--connections=3']);
        try {
            $open = [new RawWebSocket($kiln, '/ws/echo'), new RawWebSocket($kiln, '/ws/echo'), new RawWebSocket($kiln, '/ws/echo')];
            // A shed connection gets its 503 at once, before it sends anything (nothing unread: no reset).
            $shed = RawClient::to($kiln)->readResponse();
            self::assertSame(503, $shed['status'] ?? null, 'the cap of 3 is held by the WebSocket connections');
            $open[0]->send(RawWebSocket::frame(0x8, pack('n', 1000)));
            self::assertTrue($open[0]->isClosedWithin(5.0));
            $deadline = microtime(true) + 5.0;
            while (($status = HttpClient::get($kiln->baseUrl() . '/')['status']) !== 200 && microtime(true) < $deadline) {
                usleep(50_000); // the worker learns of the close on its next read
            }
            self::assertSame(200, $status, 'a closed WebSocket frees its place');
        } finally {
            $kiln->stop();
        }
    }

    /** What `kiln status --json` counts once it shows $expected (workers report once a second), or after 10 s. */
    private static function websocketsOnceSettled(string $pidFile, int $expected): int
    {
        $deadline = microtime(true) + 10.0;
        do {
            [, $json] = KilnProcess::run(['status', '--json', "--pid-file=$pidFile"]);
            $status = json_decode($json, true);
            $workers = \is_array($status) && \is_array($status['workers'] ?? null) ? $status['workers'] : [];
            $count = (int) array_sum(array_column($workers, 'websocket'));
            if ($count === $expected) {
                return $count;
            }
            usleep(100_000);
        } while (microtime(true) < $deadline);
        return $count;
    }
}
