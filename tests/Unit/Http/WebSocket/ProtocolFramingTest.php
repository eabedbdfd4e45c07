<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\WebSocket\Protocol;
use Kiln\Http\WebSocket\ProtocolViolation;
use Kiln\Http\WebSocket\WebSocketLimits;
use PHPUnit\Framework\TestCase;

/** RFC 6455 §5: framing, masking, lengths, fragmentation and control frames, fed whole and byte by byte. */
final class ProtocolFramingTest extends TestCase
{
    public function testAMaskedTextFrameIsOneTextMessage(): void
    {
        self::assertSame([['text', 'Hello']], FrameHarness::parse(FrameHarness::text('Hello')));
    }

    public function testTheRfcSampleMaskedFrameDecodes(): void
    {
        // RFC 6455 §5.7: a single-frame masked text message "Hello".
        self::assertSame([['text', 'Hello']], FrameHarness::parse("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58"));
    }

    public function testABinaryFrameIsOneBinaryMessage(): void
    {
        self::assertSame([['binary', "\x00\xff\x80"]], FrameHarness::parse(FrameHarness::binary("\x00\xff\x80")));
    }

    public function testAnEmptyFrameIsAnEmptyMessage(): void
    {
        self::assertSame([['text', ''], ['binary', '']], FrameHarness::parse(FrameHarness::text('') . FrameHarness::binary('')));
    }

    public function testSeveralFramesInOneReadGiveSeveralMessagesInOrder(): void
    {
        $input = FrameHarness::text('one') . FrameHarness::binary('two') . FrameHarness::text('three');
        self::assertSame([['text', 'one'], ['binary', 'two'], ['text', 'three']], FrameHarness::parse($input));
    }

    public function testAFrameSplitAcrossReadsWaitsForItsEnd(): void
    {
        $protocol = new Protocol();
        $frame = FrameHarness::text(str_repeat('a', 300));
        self::assertSame([], $protocol->feed(substr($frame, 0, 3)));
        self::assertSame([], $protocol->feed(substr($frame, 3, 100)));
        $events = $protocol->feed(substr($frame, 103) . FrameHarness::text('next'));
        self::assertCount(2, $events);
    }

    public function testEveryPayloadLengthEncodingIsRead(): void
    {
        foreach ([0, 1, 3, 4, 5, 125, 126, 127, 65535, 65536, 70000] as $size) {
            $payload = substr(str_repeat('abcdefghij', intdiv($size, 10) + 1), 0, $size);
            self::assertSame([['binary', $payload]], FrameHarness::parse(FrameHarness::binary($payload)), "payload of $size bytes");
            self::assertSame([['text', $payload]], FrameHarness::parse(FrameHarness::text($payload)), "payload of $size bytes");
        }
    }

    public function testNonMinimalLengthEncodingsAreAccepted(): void
    {
        $input = FrameHarness::frame(0x81, 'short', lengthForm: 16) . FrameHarness::frame(0x82, 'long', lengthForm: 64);
        self::assertSame([['text', 'short'], ['binary', 'long']], FrameHarness::parse($input));
    }

    public function testASixtyFourBitLengthWithTheMostSignificantBitSetIsAProtocolError(): void
    {
        FrameHarness::assertViolation(1002, "\x82\xFF\x80\x00\x00\x00\x00\x00\x00\x01" . FrameHarness::MASK . 'x');
    }

    public function testAnUnmaskedClientFrameIsAProtocolError(): void
    {
        FrameHarness::assertViolation(1002, FrameHarness::frame(0x81, 'Hello', null));
    }

    public function testAnUnmaskedFrameAfterGoodOnesStopsThereAndKeepsTheEarlierMessages(): void
    {
        $events = FrameHarness::assertViolation(1002, FrameHarness::text('ok') . FrameHarness::frame(0x81, 'bad', null) . FrameHarness::text('never'));
        self::assertSame([['text', 'ok']], $events);
    }

    public function testAFragmentedMessageIsJoined(): void
    {
        $input = FrameHarness::text('Hel', false) . FrameHarness::continuation('l', false) . FrameHarness::continuation('o');
        self::assertSame([['text', 'Hello']], FrameHarness::parse($input));
    }

    public function testAFragmentedBinaryMessageStaysBinary(): void
    {
        $input = FrameHarness::binary("\x01", false) . FrameHarness::continuation("\x02");
        self::assertSame([['binary', "\x01\x02"]], FrameHarness::parse($input));
    }

    public function testEmptyFragmentsAreAllowed(): void
    {
        $input = FrameHarness::text('', false) . FrameHarness::continuation('a', false) . FrameHarness::continuation('', false) . FrameHarness::continuation('');
        self::assertSame([['text', 'a']], FrameHarness::parse($input));
    }

    public function testControlFramesInterleavedWithFragmentsComeOutAtOnce(): void
    {
        $input = FrameHarness::text('a', false)
            . FrameHarness::frame(0x89, 'ping-1')
            . FrameHarness::continuation('b', false)
            . FrameHarness::frame(0x8A, 'pong-1')
            . FrameHarness::frame(0x89, '')
            . FrameHarness::continuation('c');
        self::assertSame(
            [['ping', 'ping-1'], ['pong', 'pong-1'], ['ping', ''], ['text', 'abc']],
            FrameHarness::parse($input),
        );
    }

    public function testACloseInTheMiddleOfAFragmentedMessageEndsIt(): void
    {
        $input = FrameHarness::text('a', false) . FrameHarness::close(1000) . FrameHarness::continuation('b');
        self::assertSame([['close', 1000, '']], FrameHarness::parse($input));
    }

    public function testAContinuationWithoutAMessageToContinueIsAProtocolError(): void
    {
        FrameHarness::assertViolation(1002, FrameHarness::continuation('x'));
        FrameHarness::assertViolation(1002, FrameHarness::text('whole') . FrameHarness::continuation('x', false));
    }

    public function testANewDataFrameBeforeTheFragmentedMessageEndsIsAProtocolError(): void
    {
        FrameHarness::assertViolation(1002, FrameHarness::text('a', false) . FrameHarness::text('b'));
        FrameHarness::assertViolation(1002, FrameHarness::binary('a', false) . FrameHarness::binary('b', false));
    }

    public function testAControlFrameOver125BytesIsAProtocolError(): void
    {
        FrameHarness::assertViolation(1002, FrameHarness::frame(0x89, str_repeat('p', 126)));
        // 125 bytes written with a 16-bit length is still a protocol error: control lengths are 7-bit.
        FrameHarness::assertViolation(1002, FrameHarness::frame(0x89, str_repeat('p', 125), lengthForm: 16));
        self::assertSame([['ping', str_repeat('p', 125)]], FrameHarness::parse(FrameHarness::frame(0x89, str_repeat('p', 125))));
    }

    public function testAFragmentedControlFrameIsAProtocolError(): void
    {
        FrameHarness::assertViolation(1002, FrameHarness::frame(0x09, 'ping'));
        FrameHarness::assertViolation(1002, FrameHarness::frame(0x08, ''));
    }

    public function testAPingAndAPongCarryTheirPayload(): void
    {
        self::assertSame([['ping', 'abc'], ['pong', 'def']], FrameHarness::parse(FrameHarness::frame(0x89, 'abc') . FrameHarness::frame(0x8A, 'def')));
    }

    public function testAFrameHeaderAnnouncingAMessageOverTheLimitIsRefusedBeforeItsPayloadArrives(): void
    {
        $protocol = new Protocol(new WebSocketLimits(maxMessageBytes: 1000));
        $header = "\x82\xFE" . pack('n', 1001) . FrameHarness::MASK;
        $events = $protocol->feed(substr($header, 0, 4));
        self::assertCount(1, $events);
        self::assertInstanceOf(ProtocolViolation::class, $events[0]);
        self::assertSame(1009, $events[0]->code);
        FrameHarness::assertViolation(1009, $header, new WebSocketLimits(maxMessageBytes: 1000));
    }

    public function testAHugeSixtyFourBitLengthIsRefusedAtOnce(): void
    {
        FrameHarness::assertViolation(1009, "\x82\xFF" . pack('J', \PHP_INT_MAX));
    }

    public function testAMessageOfExactlyTheLimitIsAccepted(): void
    {
        $limits = new WebSocketLimits(maxMessageBytes: 200);
        self::assertSame([['binary', str_repeat('b', 200)]], FrameHarness::parse(FrameHarness::binary(str_repeat('b', 200)), $limits));
    }

    public function testFragmentsAddingUpPastTheLimitAreRefusedAtTheFrameThatCrossesIt(): void
    {
        $limits = new WebSocketLimits(maxMessageBytes: 200);
        $input = FrameHarness::binary(str_repeat('a', 120), false) . FrameHarness::continuation(str_repeat('b', 81), false);
        FrameHarness::assertViolation(1009, $input, $limits);
        // Many small fragments count too.
        $small = FrameHarness::binary(str_repeat('a', 100), false) . FrameHarness::continuation(str_repeat('a', 100), false) . FrameHarness::continuation('a');
        FrameHarness::assertViolation(1009, $small, $limits);
    }

    public function testNothingAfterAProtocolViolationIsParsed(): void
    {
        $protocol = new Protocol();
        $events = $protocol->feed(FrameHarness::frame(0x83, 'x') . FrameHarness::text('after'));
        self::assertCount(1, $events);
        self::assertInstanceOf(ProtocolViolation::class, $events[0]);
        self::assertTrue($protocol->ended());
        self::assertSame([], $protocol->feed(FrameHarness::text('later')));
    }

    public function testNothingAfterACloseIsParsed(): void
    {
        self::assertSame([['text', 'a'], ['close', 1000, 'bye']], FrameHarness::parse(FrameHarness::text('a') . FrameHarness::close(1000, 'bye') . FrameHarness::text('b')));
        $protocol = new Protocol();
        $protocol->feed(FrameHarness::close(1001));
        self::assertSame([], $protocol->feed(FrameHarness::frame(0x83, 'even a bad frame')));
    }
}
