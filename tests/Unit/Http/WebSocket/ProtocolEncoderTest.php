<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\WebSocket\Protocol;
use PHPUnit\Framework\TestCase;

/** RFC 6455 §5.2: frames the server sends, unmasked, with the shortest length encoding. */
final class ProtocolEncoderTest extends TestCase
{
    public function testATextMessageIsOneUnmaskedFinalTextFrame(): void
    {
        self::assertSame("\x81\x05Hello", (new Protocol())->encodeMessage('Hello', false));
    }

    public function testABinaryMessageIsOneUnmaskedFinalBinaryFrame(): void
    {
        self::assertSame("\x82\x03\x00\x01\x02", (new Protocol())->encodeMessage("\x00\x01\x02", true));
    }

    public function testLengthsUseTheShortestEncoding(): void
    {
        $protocol = new Protocol();
        self::assertSame("\x82\x00", $protocol->encodeMessage('', true));
        self::assertSame("\x82\x7D", substr($protocol->encodeMessage(str_repeat('a', 125), true), 0, 2));
        self::assertSame("\x82\x7E\x00\x7E", substr($protocol->encodeMessage(str_repeat('a', 126), true), 0, 4));
        self::assertSame("\x82\x7E\xFF\xFF", substr($protocol->encodeMessage(str_repeat('a', 65535), true), 0, 4));
        self::assertSame("\x82\x7F\x00\x00\x00\x00\x00\x01\x00\x00", substr($protocol->encodeMessage(str_repeat('a', 65536), true), 0, 10));
        self::assertSame(65536 + 10, \strlen($protocol->encodeMessage(str_repeat('a', 65536), true)));
    }

    public function testATextMessageThatIsNotUtf8IsRefused(): void
    {
        $this->expectException(\ValueError::class);
        (new Protocol())->encodeMessage("\xC0\x80", false);
    }

    public function testPingAndPongFramesCarryTheirPayload(): void
    {
        $protocol = new Protocol();
        self::assertSame("\x89\x00", $protocol->encodePing());
        self::assertSame("\x89\x02hi", $protocol->encodePing('hi'));
        self::assertSame("\x8A\x02hi", $protocol->encodePong('hi'));
    }

    public function testAPingPayloadOver125BytesIsRefused(): void
    {
        self::assertSame(127, \strlen((new Protocol())->encodePing(str_repeat('p', 125))));
        $this->expectException(\ValueError::class);
        (new Protocol())->encodePing(str_repeat('p', 126));
    }

    public function testAPongPayloadOver125BytesIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        (new Protocol())->encodePong(str_repeat('p', 126));
    }

    public function testWhatTheServerEncodesAClientDecodes(): void
    {
        $protocol = new Protocol();
        foreach (['', 'short', str_repeat('€', 100), str_repeat('x', 70000)] as $payload) {
            foreach ([false, true] as $binary) {
                $frame = $protocol->encodeMessage($payload, $binary);
                self::assertSame($payload, self::decodeServerFrame($frame, $binary ? 2 : 1));
            }
        }
    }

    /** A reader in the client's role, written plainly: FIN set, no mask, the length as announced. */
    private static function decodeServerFrame(string $frame, int $opcode): string
    {
        self::assertSame(0x80 | $opcode, \ord($frame[0]));
        $size = \ord($frame[1]);
        self::assertLessThan(0x80, $size, 'server frames are not masked');
        $offset = 2;
        if ($size === 126) {
            $size = (\ord($frame[2]) << 8) | \ord($frame[3]);
            $offset = 4;
        } elseif ($size === 127) {
            $size = 0;
            for ($i = 2; $i < 10; $i++) {
                $size = ($size << 8) | \ord($frame[$i]);
            }
            $offset = 10;
        }
        self::assertSame($offset + $size, \strlen($frame));
        return substr($frame, $offset);
    }
}
