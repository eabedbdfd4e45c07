<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\WebSocket;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawWebSocket;
use PHPUnit\Framework\TestCase;

/** Bytes no conforming client sends, written on a plain socket: each closes the connection with its code. */
final class ProtocolErrorsTest extends TestCase
{
    private static ?KilnProcess $kiln = null;

    public static function setUpBeforeClass(): void
    {
        self::$kiln = KilnProcess::start(IndependentClientsTest::APP, ['--workers=1', '--limit-ws-message-bytes=4096']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$kiln?->stop();
        self::$kiln = null;
    }

    private static function connect(string $path = '/ws/echo'): RawWebSocket
    {
        \assert(self::$kiln !== null);
        return new RawWebSocket(self::$kiln, $path);
    }

    public function testAnUnmaskedClientFrameClosesWith1002(): void
    {
        $ws = self::connect();
        $ws->send(RawWebSocket::frame(0x1, 'not masked', masked: false));
        [$code] = $ws->readUntilClose();
        self::assertSame(1002, $code);
        self::assertTrue($ws->isClosedWithin(5.0));
    }

    public function testInvalidUtf8InATextMessageClosesWith1007(): void
    {
        $ws = self::connect();
        $ws->send(RawWebSocket::frame(0x1, "valid \xc3\x28 then not"));
        [$code, , $data] = $ws->readUntilClose();
        self::assertSame(1007, $code);
        self::assertSame([], $data, 'nothing of the invalid message was handled');
    }

    public function testInvalidUtf8SplitAcrossFragmentsClosesWith1007(): void
    {
        $ws = self::connect();
        $ws->send(RawWebSocket::frame(0x1, "caf\xc3", fin: false));
        $ws->send(RawWebSocket::frame(0x0, "\x28", fin: true));
        self::assertSame(1007, $ws->readUntilClose()[0]);
    }

    public function testAMessageOverTheLimitClosesWith1009EvenBeforeItsPayloadArrives(): void
    {
        $ws = self::connect();
        $frame = RawWebSocket::frame(0x2, str_repeat('x', 5000));
        $ws->send(substr($frame, 0, 100));
        self::assertSame(1009, $ws->readUntilClose()[0]);
    }

    public function testFragmentsTogetherOverTheLimitCloseWith1009(): void
    {
        $ws = self::connect();
        $ws->send(RawWebSocket::frame(0x2, str_repeat('x', 3000), fin: false));
        $ws->send(RawWebSocket::frame(0x0, str_repeat('x', 3000), fin: true));
        self::assertSame(1009, $ws->readUntilClose()[0]);
    }

    public function testAMessageAtTheLimitIsServedAndTheConnectionStaysOpen(): void
    {
        $ws = self::connect();
        $ws->send(RawWebSocket::frame(0x2, str_repeat('y', 4096)));
        $frame = $ws->readFrame();
        self::assertNotNull($frame);
        self::assertSame(0x2, $frame['opcode']);
        self::assertSame(4096, \strlen($frame['payload']));
        $ws->send(RawWebSocket::frame(0x8, pack('n', 1000) . 'done'));
        self::assertSame(1000, $ws->readUntilClose()[0]);
        self::assertTrue($ws->isClosedWithin(5.0), 'the server closes the TCP connection after the close handshake');
    }

    public function testAPingIsAnsweredWithAPongCarryingItsPayload(): void
    {
        $ws = self::connect();
        $ws->send(RawWebSocket::frame(0x9, 'ping-payload'));
        $frame = $ws->readFrame();
        self::assertSame(['opcode' => 0xA, 'fin' => true, 'payload' => 'ping-payload'], $frame);
    }

    public function testMessagesToAHandlerThatSuspendsAreAnsweredInOrder(): void
    {
        $ws = self::connect('/ws/slow-echo');
        $frames = '';
        for ($i = 1; $i <= 30; $i++) {
            $frames .= RawWebSocket::frame(0x1, "message $i");
        }
        $ws->send($frames);
        $received = [];
        for ($i = 1; $i <= 30; $i++) {
            $received[] = $ws->readFrame()['payload'] ?? null;
        }
        self::assertSame(array_map(static fn(int $i): string => "message $i", range(1, 30)), $received);
    }

    public function testTheServerKeepsServingOtherConnectionsAfterProtocolErrors(): void
    {
        $bad = self::connect();
        $bad->send(RawWebSocket::frame(0x3, 'reserved opcode'));
        self::assertSame(1002, $bad->readUntilClose()[0]);
        $good = self::connect();
        $good->send(RawWebSocket::frame(0x1, 'still here'));
        self::assertSame('still here', $good->readFrame()['payload'] ?? null);
    }
}
