<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\WebSocket\Protocol;
use Kiln\Http\WebSocket\ProtocolViolation;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** RFC 6455 §8.1: text messages are UTF-8, checked across fragments, failing at the first bad sequence (1007). */
final class ProtocolUtf8Test extends TestCase
{
    /** Every kind of character: 1, 2, 3 and 4 bytes, the edges of each range. */
    private const VALID = "a\u{7F}\u{80}é\u{7FF}\u{800}€\u{D7FF}\u{E000}\u{FFFF}\u{10000}😀\u{10FFFF}z";

    public function testValidUtf8TextOfEveryLengthIsAccepted(): void
    {
        self::assertSame([['text', self::VALID]], FrameHarness::parse(FrameHarness::text(self::VALID)));
    }

    public function testTextSplitIntoFragmentsAtEveryByteIsAccepted(): void
    {
        $length = \strlen(self::VALID);
        for ($cut = 0; $cut <= $length; $cut++) {
            $input = FrameHarness::text(substr(self::VALID, 0, $cut), false) . FrameHarness::continuation(substr(self::VALID, $cut));
            self::assertSame([['text', self::VALID]], FrameHarness::parse($input), "cut at $cut");
        }
    }

    public function testTextSplitIntoOneByteFragmentsIsAccepted(): void
    {
        $bytes = str_split(self::VALID);
        $input = FrameHarness::text(array_shift($bytes), false);
        $last = array_pop($bytes);
        foreach ($bytes as $byte) {
            $input .= FrameHarness::continuation($byte, false);
        }
        $input .= FrameHarness::continuation((string) $last);
        self::assertSame([['text', self::VALID]], FrameHarness::parse($input));
    }

    /** @return iterable<string, array{string}> */
    public static function invalid(): iterable
    {
        yield 'lone continuation byte' => ["a\x80b"];
        yield 'overlong 2-byte (C0 80)' => ["\xC0\x80"];
        yield 'overlong 2-byte (C1 BF)' => ["\xC1\xBF"];
        yield 'overlong 3-byte (E0 80 80)' => ["\xE0\x80\x80"];
        yield 'overlong 4-byte (F0 80 80 80)' => ["\xF0\x80\x80\x80"];
        yield 'surrogate (ED A0 80)' => ["\xED\xA0\x80"];
        yield 'low surrogate (ED BF BF)' => ["\xED\xBF\xBF"];
        yield 'past U+10FFFF (F4 90 80 80)' => ["\xF4\x90\x80\x80"];
        yield 'lead byte F5' => ["\xF5\x80\x80\x80"];
        yield 'byte FF' => ["\xFF"];
        yield 'truncated then ASCII' => ["\xE2\x82a"];
        yield 'message ends inside a character' => ["ok\xE2\x82"];
    }

    #[DataProvider('invalid')]
    public function testInvalidUtf8InATextMessageIsRefusedWith1007(string $bytes): void
    {
        FrameHarness::assertViolation(1007, FrameHarness::text($bytes));
        // The same bytes over fragments, cut at every place.
        for ($cut = 0; $cut <= \strlen($bytes); $cut++) {
            FrameHarness::assertViolation(1007, FrameHarness::text(substr($bytes, 0, $cut), false) . FrameHarness::continuation(substr($bytes, $cut)));
        }
    }

    public function testInvalidUtf8InABinaryMessageIsFine(): void
    {
        self::assertSame([['binary', "\xFF\xC0\x80"]], FrameHarness::parse(FrameHarness::binary("\xFF\xC0\x80")));
    }

    public function testAnInvalidFirstFragmentFailsBeforeTheMessageEnds(): void
    {
        $protocol = new Protocol();
        $events = $protocol->feed(FrameHarness::text("ok\xC0\x80 and more", false));
        self::assertCount(1, $events);
        self::assertInstanceOf(ProtocolViolation::class, $events[0]);
        self::assertSame(1007, $events[0]->code);
    }

    public function testALongTextFrameFailsAtItsFirstBadByteBeforeTheFrameIsWhole(): void
    {
        foreach ([0, 1, 2, 3, 5, 1000] as $goodBytes) {
            $frame = FrameHarness::text(str_repeat('é', 2000) . str_repeat('a', $goodBytes) . "\xC0\x80" . str_repeat('z', 5000));
            $protocol = new Protocol();
            // The header (16-bit length) and the mask, then everything up to the bad pair, then the pair.
            self::assertSame([], $protocol->feed(substr($frame, 0, 8 + 4000 + $goodBytes)), 'all good so far');
            $events = $protocol->feed(substr($frame, 8 + 4000 + $goodBytes, 2));
            self::assertCount(1, $events, "after $goodBytes good bytes");
            self::assertInstanceOf(ProtocolViolation::class, $events[0]);
            self::assertSame(1007, $events[0]->code);
        }
    }

    public function testALongTextFrameReceivedInPiecesOfEverySizeIsAccepted(): void
    {
        $text = str_repeat(self::VALID, 40);
        $frame = FrameHarness::text($text);
        foreach ([3, 5, 7, 64, 333] as $piece) {
            self::assertSame([['text', $text]], FrameHarness::run(str_split($frame, $piece)), "pieces of $piece");
        }
    }

    public function testAContinuationFrameIsCheckedBeforeItIsWholeFromTheCharacterTheFragmentBeforeLeftCut(): void
    {
        $protocol = new Protocol();
        $first = FrameHarness::text("ok\xE2\x82", false);
        $next = FrameHarness::continuation('A' . str_repeat('b', 300)); // 0xE2 0x82 then 'A': never valid
        self::assertSame([], $protocol->feed($first . substr($next, 0, 4 + 4)));
        $events = $protocol->feed(substr($next, 8, 1));
        self::assertCount(1, $events);
        self::assertInstanceOf(ProtocolViolation::class, $events[0]);
        self::assertSame(1007, $events[0]->code);
    }

    public function testACompressedTextFrameIsNotCheckedBeforeItIsInflated(): void
    {
        $protocol = new Protocol(deflate: new \Kiln\Http\WebSocket\PerMessageDeflate());
        $frame = FrameHarness::frame(0x41, (string) gzdeflate(str_repeat('x', 10), 6, \ZLIB_ENCODING_RAW) . "\xC0\x80\xFF\xFF");
        self::assertSame([], $protocol->feed(substr($frame, 0, -1)), 'compressed bytes are not text');
    }

    public function testAFragmentEndingInAPrefixThatCanNeverBeValidFailsAtOnce(): void
    {
        // ED A0 starts a surrogate: no continuation can make it valid, so the first fragment already fails.
        foreach (["\xED\xA0", "\xF4\x90", "\xF0\x8F", "\xE0\x9F", "\xC1", "\xF5"] as $prefix) {
            $events = FrameHarness::parse(FrameHarness::text("ok$prefix", false));
            self::assertSame([['violation', 1007]], $events, bin2hex($prefix));
        }
    }

    public function testAFragmentEndingInAValidPrefixWaitsForTheRest(): void
    {
        foreach (["\xED\x9F", "\xF4\x8F\xBF", "\xF0\x90", "\xE0\xA0", "\xC2", "\xE2\x82"] as $prefix) {
            self::assertSame([], FrameHarness::parse(FrameHarness::text("ok$prefix", false)), bin2hex($prefix));
        }
    }

    public function testAnIncompleteCharacterCarriedAcrossSeveralFragmentsIsChecked(): void
    {
        // F0 9F 98 80 (😀) delivered one byte per fragment, then the same with a bad last byte.
        $good = FrameHarness::text("\xF0", false) . FrameHarness::continuation("\x9F", false) . FrameHarness::continuation("\x98", false) . FrameHarness::continuation("\x80");
        self::assertSame([['text', '😀']], FrameHarness::parse($good));
        $bad = FrameHarness::text("\xF0", false) . FrameHarness::continuation("\x9F", false) . FrameHarness::continuation("\x98", false) . FrameHarness::continuation('A');
        FrameHarness::assertViolation(1007, $bad);
    }

    public function testAPingWithInvalidUtf8IsNotChecked(): void
    {
        self::assertSame([['ping', "\xFF"]], FrameHarness::parse(FrameHarness::frame(0x89, "\xFF")));
    }
}
