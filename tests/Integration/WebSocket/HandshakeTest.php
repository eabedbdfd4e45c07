<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\WebSocket;

use Kiln\Tests\Support\ClientScript;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/** Handshakes Kiln refuses, with the HTTP status a client sees, before anything is upgraded. */
final class HandshakeTest extends TestCase
{
    private static ?KilnProcess $kiln = null;

    public static function setUpBeforeClass(): void
    {
        self::$kiln = KilnProcess::start(IndependentClientsTest::APP, ['--workers=1', '--ws-origins=https://good.example']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$kiln?->stop();
        self::$kiln = null;
    }

    /**
     * @param array<string, string> $headers
     * @return array{status: int, headers: array<string, list<string>>, body: string}
     */
    private static function handshake(string $path, array $headers = []): array
    {
        \assert(self::$kiln !== null);
        $headers += ['Upgrade' => 'websocket', 'Connection' => 'Upgrade', 'Sec-WebSocket-Key' => 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version' => '13'];
        $request = "GET $path HTTP/1.1\r\nHost: localhost\r\n";
        foreach ($headers as $name => $value) {
            if ($value !== '') {
                $request .= "$name: $value\r\n";
            }
        }
        $client = RawClient::to(self::$kiln);
        $client->send($request . "\r\n");
        $response = $client->readResponse();
        self::assertNotNull($response, 'a response');
        return $response;
    }

    private static function url(string $path): string
    {
        \assert(self::$kiln !== null);
        return 'ws://' . self::$kiln->host() . ':' . self::$kiln->port() . $path;
    }

    public function testAnOnOpenThatThrowsAnHttpErrorRefusesWithItsStatus(): void
    {
        self::assertSame(['status' => 409], ClientScript::python('handshake', self::url('/ws/rooms/closed'))->next());
        self::assertSame(409, self::handshake('/ws/rooms/closed')['status']);
    }

    public function testMiddlewareRunsBeforeTheUpgradeAndMayRefuseIt(): void
    {
        self::assertSame(['status' => 401], ClientScript::python('handshake', self::url('/ws/echo?deny=1'))->next());
    }

    public function testAWrongVersionGets426WithTheVersionKilnSpeaks(): void
    {
        $response = self::handshake('/ws/echo', ['Sec-WebSocket-Version' => '8']);
        self::assertSame(426, $response['status']);
        self::assertSame('13', self::header($response, 'sec-websocket-version'));
    }

    public function testAnOriginNotAllowedGets403AndAnAllowedOneIsUpgraded(): void
    {
        self::assertSame(403, self::handshake('/ws/echo', ['Origin' => 'https://evil.example'])['status']);
        self::assertSame(101, self::handshake('/ws/echo', ['Origin' => 'https://good.example'])['status']);
        self::assertSame(['status' => 403], ClientScript::python('handshake', self::url('/ws/echo'), ['Origin: https://evil.example'])->next());
    }

    public function testAPlainGetOfAWebSocketRouteGets426NamingTheProtocol(): void
    {
        $response = self::handshake('/ws/echo', ['Upgrade' => '', 'Connection' => '', 'Sec-WebSocket-Key' => '', 'Sec-WebSocket-Version' => '']);
        self::assertSame(426, $response['status']);
        self::assertSame('websocket', self::header($response, 'upgrade'));
        self::assertSame(200, self::handshake('/', ['Upgrade' => '', 'Connection' => ''])['status'], 'other routes are unaffected');
    }

    public function testAHandshakeWithoutConnectionUpgradeGets400(): void
    {
        self::assertSame(400, self::handshake('/ws/echo', ['Connection' => 'keep-alive'])['status']);
    }

    public function testABadKeyGets400(): void
    {
        self::assertSame(400, self::handshake('/ws/echo', ['Sec-WebSocket-Key' => 'too-short'])['status']);
    }

    public function testTheServerPicksItsPreferredSubprotocolAmongThoseOffered(): void
    {
        $response = self::handshake('/ws/rooms/a', ['Sec-WebSocket-Protocol' => 'chat.v1, chat.v2']);
        self::assertSame(101, $response['status']);
        self::assertSame('chat.v2', self::header($response, 'sec-websocket-protocol'));
    }

    /** @param array{status: int, headers: array<string, list<string>>, body: string} $response */
    private static function header(array $response, string $name): ?string
    {
        return $response['headers'][$name][0] ?? null;
    }
}
