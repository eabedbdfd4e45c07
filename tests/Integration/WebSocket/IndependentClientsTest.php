<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\WebSocket;

use Kiln\Tests\Support\ClientScript;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** Kiln's WebSocket endpoints as two independent implementations see them: python3-websockets and npm ws. */
final class IndependentClientsTest extends TestCase
{
    public const APP = __DIR__ . '/../../Fixtures/websocket/app.php';

    private static ?KilnProcess $plain = null;

    private static ?KilnProcess $deflate = null;

    public static function setUpBeforeClass(): void
    {
        self::$plain = KilnProcess::start(self::APP, ['--workers=1']);
        self::$deflate = KilnProcess::start(self::APP, ['--workers=1', '--ws-deflate']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$plain?->stop();
        self::$deflate?->stop();
        self::$plain = self::$deflate = null;
    }

    private static function url(?KilnProcess $kiln, string $path): string
    {
        \assert($kiln !== null);
        return 'ws://' . $kiln->host() . ':' . $kiln->port() . $path;
    }

    public function testPythonClientGetsTextAsTextBinaryAsBinaryFragmentsJoinedAndItsPingAnswered(): void
    {
        $client = ClientScript::python('echo', self::url(self::$plain, '/ws/echo'));
        $result = $client->next();
        self::assertSame('héllo wörld', $result['text']);
        self::assertTrue($result['text_is_str']);
        self::assertSame(bin2hex(implode('', array_map('chr', range(0, 255)))), $result['binary']);
        self::assertTrue($result['binary_is_bytes']);
        self::assertSame('fragmented ✓', $result['fragmented']);
        self::assertSame('0001fffe', $result['fragmented_binary']);
        self::assertTrue($result['pong']);
        self::assertNull($result['extensions']);
        self::assertSame(['close_code' => 1000], $client->next());
    }

    public function testNodeClientGetsTextAsTextBinaryAsBinaryFragmentsJoinedAndItsPingAnswered(): void
    {
        $result = ClientScript::node('echo', self::url(self::$plain, '/ws/echo'))->next();
        self::assertSame('héllo wörld', $result['text'], json_encode($result) ?: '');
        self::assertFalse($result['textIsBinary']);
        self::assertSame('000102ff', $result['binary']);
        self::assertTrue($result['binaryIsBinary']);
        self::assertSame('fragmented ✓', $result['fragmented']);
        self::assertSame('are you there', $result['pong']);
        self::assertIsArray($result['close']);
        self::assertSame(1000, $result['close']['code']);
    }

    public function testDeflateIsNotNegotiatedWithoutWsDeflateThoughBothClientsOfferIt(): void
    {
        $python = ClientScript::python('deflate', self::url(self::$plain, '/ws/echo'))->next();
        self::assertNull($python['extensions']);
        self::assertTrue($python['big_ok'] && $python['binary_ok'] && $python['all_ok']);
        $node = ClientScript::node('deflate', self::url(self::$plain, '/ws/echo'))->next();
        self::assertSame('', $node['extensions'], json_encode($node) ?: '');
        self::assertTrue($node['bigOk'] && $node['allOk']);
    }

    public function testWithWsDeflateBothClientsNegotiatePermessageDeflateAndMessagesRoundTrip(): void
    {
        $python = ClientScript::python('deflate', self::url(self::$deflate, '/ws/echo'))->next();
        self::assertIsString($python['extensions']);
        self::assertStringStartsWith('permessage-deflate', $python['extensions']);
        self::assertTrue($python['big_ok'], 'a 500 kB compressible message came back whole');
        self::assertTrue($python['binary_ok']);
        self::assertTrue($python['all_ok'], 'twenty messages in a row on one compression context');
        $node = ClientScript::node('deflate', self::url(self::$deflate, '/ws/echo'))->next();
        self::assertIsString($node['extensions'], json_encode($node) ?: '');
        self::assertStringStartsWith('permessage-deflate', $node['extensions']);
        self::assertTrue($node['bigOk']);
        self::assertTrue($node['allOk']);
    }

    public function testOnOpenSeesRouteParamsCookiesHeadersMiddlewareAndTheSubprotocolChosen(): void
    {
        $client = ClientScript::python('handshake', self::url(self::$plain, '/ws/rooms/lobby'), ['Cookie: user=ann', 'X-Test: yes']);
        $result = $client->next();
        self::assertSame(101, $result['status']);
        self::assertIsString($result['first']);
        $first = json_decode($result['first'], true);
        self::assertIsArray($first);
        self::assertSame('lobby', $first['room']);
        self::assertSame('ann', $first['cookie']);
        self::assertSame('yes', $first['header']);
        self::assertSame('ran', $first['middleware']);
        self::assertNull($first['subprotocol']);
    }
}
