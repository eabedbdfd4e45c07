<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\WebSocket\PerMessageDeflate;
use Kiln\Http\WebSocket\WebSocketLimits;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * Inputs the server must refuse, with the close code it answers. Each is parsed in one feed and one byte
 * at a time; both must end in the same ProtocolViolation with nothing after it.
 */
final class RejectedFramesTest extends TestCase
{
    /** @return iterable<string, array{0: int, 1: string, 2?: WebSocketLimits}> */
    public static function rejected(): iterable
    {
        $h = FrameHarness::class;
        yield 'unmasked text frame' => [1002, $h::frame(0x81, 'x', null)];
        yield 'unmasked close frame' => [1002, $h::frame(0x88, '', null)];
        yield 'RSV1 without deflate' => [1002, $h::frame(0xC1, 'x')];
        yield 'RSV2' => [1002, $h::frame(0xA1, 'x')];
        yield 'RSV3' => [1002, $h::frame(0x91, 'x')];
        yield 'RSV1 on a ping' => [1002, $h::frame(0xC9, '')];
        foreach ([3, 4, 5, 6, 7] as $opcode) {
            yield "reserved data opcode $opcode" => [1002, $h::frame(0x80 | $opcode, 'x')];
        }
        foreach ([0xB, 0xC, 0xD, 0xE, 0xF] as $opcode) {
            yield "reserved control opcode $opcode" => [1002, $h::frame(0x80 | $opcode, '')];
        }
        yield 'continuation first' => [1002, $h::continuation('x')];
        yield 'unfinished continuation first' => [1002, $h::continuation('x', false)];
        yield 'text inside a fragmented message' => [1002, $h::text('a', false) . $h::text('b')];
        yield 'binary inside a fragmented text' => [1002, $h::text('a', false) . $h::binary('b')];
        yield 'fragmented ping' => [1002, $h::frame(0x09, '')];
        yield 'fragmented pong' => [1002, $h::frame(0x0A, '')];
        yield 'ping of 126 bytes' => [1002, $h::frame(0x89, str_repeat('x', 126))];
        yield 'close of 126 bytes' => [1002, $h::frame(0x88, pack('n', 1000) . str_repeat('x', 124))];
        yield 'ping with a 64-bit length' => [1002, $h::frame(0x89, 'x', lengthForm: 64)];
        yield '64-bit length with MSB set' => [1002, "\x82\xFF\x80" . str_repeat("\x00", 7)];
        yield 'close with one byte' => [1002, $h::frame(0x88, "\x03")];
        yield 'close code 999' => [1002, $h::close(999)];
        yield 'close code 1004' => [1002, $h::close(1004)];
        yield 'close code 1005' => [1002, $h::close(1005)];
        yield 'close code 1006' => [1002, $h::close(1006)];
        yield 'close code 1015' => [1002, $h::close(1015)];
        yield 'close code 2999' => [1002, $h::close(2999)];
        yield 'close code 5000' => [1002, $h::close(5000)];
        yield 'close reason not UTF-8' => [1007, $h::close(1000, "\xFF")];
        yield 'text not UTF-8' => [1007, $h::text("\xFF")];
        yield 'text surrogate' => [1007, $h::text("\xED\xA0\x80")];
        yield 'text overlong' => [1007, $h::text("\xC0\xAF")];
        yield 'text past U+10FFFF' => [1007, $h::text("\xF4\x90\x80\x80")];
        yield 'fragment with a surrogate prefix' => [1007, $h::text("\xED\xA0", false)];
        yield 'text ending inside a character' => [1007, $h::text("\xE2\x82", false) . $h::continuation('')];
        yield 'message over the limit in one frame' => [1009, $h::binary(str_repeat('x', 201)), new WebSocketLimits(200)];
        yield 'message over the limit in fragments' => [1009, $h::binary(str_repeat('x', 125), false) . $h::continuation(str_repeat('x', 76)), new WebSocketLimits(200)];
        yield 'announced length over the limit' => [1009, "\x82\xFF" . pack('J', 1 << 40)];
    }

    #[DataProvider('rejected')]
    public function testTheInputIsRefusedWithItsCloseCode(int $code, string $input, ?WebSocketLimits $limits = null): void
    {
        self::assertSame([], FrameHarness::assertViolation($code, $input, $limits));
        // The same after a good message: the message comes out, then the violation.
        self::assertSame([['text', 'ok']], FrameHarness::assertViolation($code, FrameHarness::text('ok') . $input, $limits));
    }

    /** @return iterable<string, array{int, string}> */
    public static function rejectedWithDeflate(): iterable
    {
        yield 'RSV1 on a continuation' => [1002, FrameHarness::frame(0x41, self::compressed('a'), lengthForm: 7) . FrameHarness::frame(0xC0, 'x')];
        yield 'RSV1 on a close' => [1002, FrameHarness::frame(0xC8, '')];
        yield 'corrupt compressed data' => [1007, FrameHarness::frame(0xC2, "\xFF\xFF\xFF\xFF")];
        yield 'compressed text not UTF-8' => [1007, FrameHarness::frame(0xC1, self::compressed("\xC0\x80"))];
        yield 'inflates past the limit' => [1009, FrameHarness::frame(0xC2, self::compressed(str_repeat('0', 300)))];
    }

    #[DataProvider('rejectedWithDeflate')]
    public function testTheInputIsRefusedWithDeflateNegotiated(int $code, string $input): void
    {
        FrameHarness::assertViolation($code, $input, new WebSocketLimits(200), static fn() => new PerMessageDeflate());
    }

    private static function compressed(string $message): string
    {
        return (string) gzdeflate($message, 6, \ZLIB_ENCODING_RAW); // a final block, as RFC 7692 §7.2.3.3 allows
    }
}
