<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\Request;
use Kiln\Http\WebSocket\Handshake;
use Kiln\Http\WebSocket\HandshakeOptions;
use Kiln\Http\WebSocket\HandshakeOutcome;
use Kiln\Http\Wire\RequestHead;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** RFC 6455 §4.2: the server's side of the opening handshake. */
final class HandshakeTest extends TestCase
{
    private const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

    public function testTheAcceptKeyOfTheRfcSampleMatches(): void
    {
        // RFC 6455 §1.3
        self::assertSame('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=', Handshake::acceptKey(self::KEY));
    }

    public function testAValidHandshakeIsAcceptedWith101AndTheHeadersToSend(): void
    {
        $outcome = self::negotiate([]);
        self::assertTrue($outcome->accepted);
        self::assertSame(101, $outcome->status);
        self::assertSame([
            'Upgrade' => 'websocket',
            'Connection' => 'Upgrade',
            'Sec-WebSocket-Accept' => 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=',
        ], $outcome->headers);
        self::assertNull($outcome->subprotocol);
        self::assertNull($outcome->deflate);
        self::assertSame('', $outcome->reason);
    }

    public function testAnyKeyOfSixteenRandomBytesIsAccepted(): void
    {
        for ($i = 0; $i < 200; $i++) {
            $key = base64_encode(random_bytes(16));
            self::assertTrue(self::negotiate(['sec-websocket-key' => [$key]])->accepted, $key);
        }
    }

    public function testUpgradeAndConnectionAreTokenListsMatchedWithoutCase(): void
    {
        self::assertTrue(self::negotiate(['upgrade' => ['WebSocket'], 'connection' => ['keep-alive, UPGRADE']])->accepted);
        self::assertTrue(self::negotiate(['upgrade' => ['foo/1, websocket'], 'connection' => ['keep-alive', 'Upgrade']])->accepted);
    }

    /** @return iterable<string, array{0: int, 1: array<string, list<string>|null>, 2?: string, 3?: string}> */
    public static function refused(): iterable
    {
        yield 'POST' => [400, [], 'POST'];
        yield 'HTTP/1.0' => [400, [], 'GET', '1.0'];
        yield 'no Upgrade' => [400, ['upgrade' => null]];
        yield 'Upgrade: h2c' => [400, ['upgrade' => ['h2c']]];
        yield 'Upgrade lookalike' => [400, ['upgrade' => ['websockets']]];
        yield 'no Connection' => [400, ['connection' => null]];
        yield 'Connection: keep-alive only' => [400, ['connection' => ['keep-alive']]];
        yield 'no key' => [400, ['sec-websocket-key' => null]];
        yield 'key not base64' => [400, ['sec-websocket-key' => ['not base64 at all!!!!!==']]];
        yield 'key of 15 bytes' => [400, ['sec-websocket-key' => [base64_encode(str_repeat('k', 15))]]];
        yield 'key of 17 bytes' => [400, ['sec-websocket-key' => [base64_encode(str_repeat('k', 17))]]];
        yield 'key without padding' => [400, ['sec-websocket-key' => ['dGhlIHNhbXBsZSBub25jZQ']]];
        yield 'key with a space inside' => [400, ['sec-websocket-key' => ['dGhlIHNhbXBsZSBub25jZQ= =']]];
        yield 'key with padding bits set' => [400, ['sec-websocket-key' => ['dGhlIHNhbXBsZSBub25jZR==']]];
        yield 'key in base64url' => [400, ['sec-websocket-key' => ['dGhlIHNhbXBsZSBub25j_-==']]];
        yield 'two keys' => [400, ['sec-websocket-key' => [self::KEY, self::KEY]]];
        yield 'no version' => [426, ['sec-websocket-version' => null]];
        yield 'version 8' => [426, ['sec-websocket-version' => ['8']]];
        yield 'version list' => [426, ['sec-websocket-version' => ['13, 8']]];
        yield 'version twice' => [426, ['sec-websocket-version' => ['13', '13']]];
    }

    /** @param array<string, list<string>|null> $headers */
    #[DataProvider('refused')]
    public function testAHandshakeThatBreaksARuleIsRefused(int $status, array $headers, string $method = 'GET', string $version = '1.1'): void
    {
        $outcome = self::negotiate($headers, new HandshakeOptions(), $method, $version);
        self::assertFalse($outcome->accepted);
        self::assertSame($status, $outcome->status);
        self::assertNotSame('', $outcome->reason);
        self::assertSame($status === 426 ? ['Sec-WebSocket-Version' => '13'] : [], $outcome->headers);
    }

    public function testAnOriginOutsideTheAllowListIsRefusedWith403(): void
    {
        $options = new HandshakeOptions(allowedOrigins: ['https://example.com', 'http://localhost:8080']);
        $outcome = self::negotiate(['origin' => ['https://evil.example']], $options);
        self::assertSame([false, 403], [$outcome->accepted, $outcome->status]);
        self::assertStringContainsString('https://evil.example', $outcome->reason);
        self::assertSame(403, self::negotiate(['origin' => ['https://example.com:8443']], $options)->status, 'another port is another origin');
        self::assertSame(403, self::negotiate(['origin' => ['http://example.com']], $options)->status, 'another scheme too');
        self::assertSame(403, self::negotiate(['origin' => ['null']], $options)->status);
    }

    public function testTheSchemesDefaultPortNamesTheSameOrigin(): void
    {
        $options = new HandshakeOptions(allowedOrigins: ['https://example.com', 'http://localhost:80/']);
        self::assertTrue(self::negotiate(['origin' => ['https://example.com:443']], $options)->accepted);
        self::assertTrue(self::negotiate(['origin' => ['http://localhost']], $options)->accepted);
        self::assertTrue(self::negotiate(['origin' => ['https://example.com']], new HandshakeOptions(allowedOrigins: ['https://example.com:443']))->accepted, 'as a browser sends it');
    }

    public function testAnAllowedOriginIsMatchedWithoutCase(): void
    {
        $options = new HandshakeOptions(allowedOrigins: ['https://Example.com']);
        self::assertTrue(self::negotiate(['origin' => ['https://example.COM']], $options)->accepted);
    }

    public function testARequestWithoutOriginIsNotFromABrowserAndPasses(): void
    {
        self::assertTrue(self::negotiate([], new HandshakeOptions(allowedOrigins: ['https://example.com']))->accepted);
    }

    public function testAnEmptyAllowListAllowsAnyOrigin(): void
    {
        self::assertTrue(self::negotiate(['origin' => ['https://anywhere.example']])->accepted);
    }

    public function testTheFirstSubprotocolOfTheServersListThatTheClientOffersIsSelected(): void
    {
        $options = new HandshakeOptions(subprotocols: ['v2.chat', 'v1.chat']);
        $outcome = self::negotiate(['sec-websocket-protocol' => ['v1.chat, v2.chat']], $options);
        self::assertSame('v2.chat', $outcome->subprotocol);
        self::assertSame('v2.chat', $outcome->headers['Sec-WebSocket-Protocol']);
        self::assertSame('v1.chat', self::negotiate(['sec-websocket-protocol' => ['mqtt', 'v1.chat']], $options)->subprotocol);
    }

    public function testWithNoSubprotocolInCommonTheConnectionGoesOnWithoutOne(): void
    {
        $options = new HandshakeOptions(subprotocols: ['v2.chat']);
        $outcome = self::negotiate(['sec-websocket-protocol' => ['mqtt']], $options);
        self::assertTrue($outcome->accepted);
        self::assertNull($outcome->subprotocol);
        self::assertArrayNotHasKey('Sec-WebSocket-Protocol', $outcome->headers);
        self::assertNull(self::negotiate([], $options)->subprotocol);
    }

    public function testASubprotocolThatIsNotATokenIsAProgrammingError(): void
    {
        $this->expectException(\ValueError::class);
        new HandshakeOptions(subprotocols: ['two words']);
    }

    /** @param array<string, list<string>|null> $overrides null removes a header */
    private static function negotiate(array $overrides, HandshakeOptions $options = new HandshakeOptions(), string $method = 'GET', string $version = '1.1'): HandshakeOutcome
    {
        $headers = [
            'host' => ['server.example.com'],
            'upgrade' => ['websocket'],
            'connection' => ['Upgrade'],
            'sec-websocket-key' => [self::KEY],
            'sec-websocket-version' => ['13'],
        ];
        foreach ($overrides as $name => $values) {
            if ($values === null) {
                unset($headers[$name]);
            } else {
                $headers[$name] = $values;
            }
        }
        $head = new RequestHead($method, '/chat', $version, $headers, '/chat', '', 'server.example.com', RequestHead::BODY_NONE, 0, true, false);
        return Handshake::negotiate(new Request($head, '', null, '127.0.0.1', 50000), $options);
    }
}
