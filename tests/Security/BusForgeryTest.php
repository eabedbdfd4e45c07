<?php

declare(strict_types=1);

namespace Kiln\Tests\Security;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * Publishing on the node bus from outside: an HTTP client must not reach it by any header or path. Scripts
 * of the isolated and fork tiers get the worker's bus socket in KILN_BUS_SOCKET / KILN_BUS_TOKEN; a header
 * of a similar name must not set or change them, and the socket refuses a connection without the token.
 */
final class BusForgeryTest extends TestCase
{
    private const APP = __DIR__ . '/../Fixtures/bus/app.php';

    private const HEADERS = [
        'Kiln-Bus-Socket' => '/tmp/evil.sock',
        'Kiln_Bus_Socket' => '/tmp/evil.sock',
        'KILN-BUS-TOKEN' => 'evil',
        'Kiln-Bus-Token' => 'evil',
        'X-Kiln-Publish' => 'news forged',
        'Proxy' => 'http://evil',
    ];

    public function testHeadersDoNotSetTheBusSocketOrTokenOfAnyTierAndAWrongTokenPublishesNothing(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--workers=1', '--pool-size=1']);
        try {
            foreach (['/iso/server.php', '/fork/server.php'] as $path) {
                $response = HttpClient::get($kiln->baseUrl() . $path, self::HEADERS, 15);
                self::assertSame(200, $response['status'], $response['body']);
                $seen = json_decode($response['body'], true);
                self::assertIsArray($seen, $path);
                self::assertIsString($seen['socket'], $path);
                self::assertStringEndsWith('/bus.sock', $seen['socket'], $path);
                self::assertNotSame('/tmp/evil.sock', $seen['env'], $path);
                self::assertIsString($seen['token'], $path);
                self::assertMatchesRegularExpression('/^[0-9a-f]{64}$/D', $seen['token'], $path);
                self::assertSame(0600, fileperms($seen['socket']) & 0777, $path);
                self::assertSame(0700, fileperms(\dirname($seen['socket'])) & 0777, $path);
                // Without the token: closed, no answer, nothing published.
                $socket = stream_socket_client('unix://' . $seen['socket'], $errno, $error, 2);
                self::assertNotFalse($socket, (string) $error);
                fwrite($socket, pack('N', 4) . 'evil' . pack('N', 12) . pack('n', 4) . 'newsforged');
                stream_set_timeout($socket, 5);
                self::assertSame('', (string) stream_get_contents($socket), $path);
                fclose($socket);
            }
            // Headers on pages and paths that do not publish themselves publish nothing either (the app's own
            // publishing pages, /publish.php and its extensionless /publish/..., publish what they decide).
            foreach (['/received', '/iso/server.php', '/fork/server.php', '/missing', '/.kiln/bus', '/bus.sock', '/iso/../../bus.sock'] as $path) {
                HttpClient::get($kiln->baseUrl() . $path, self::HEADERS);
            }
            $client = new RawClient($kiln->host(), $kiln->port(), 10);
            $client->send("POST /publish/news HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nConnection: close\r\n\r\nmarker");
            self::assertSame(200, $client->readResponse(10)['status'] ?? 0);
            $deadline = microtime(true) + 10;
            do {
                $report = json_decode(HttpClient::get($kiln->baseUrl() . '/received')['body'], true);
                $heard = \is_array($report) ? $report['messages'] ?? null : null;
                self::assertIsArray($heard);
            } while (!\in_array('marker', $heard, true) && microtime(true) < $deadline);
            self::assertSame(['marker'], $heard);
        } finally {
            $kiln->stop();
        }
    }
}
