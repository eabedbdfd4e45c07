<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\WebSocket\InflateException;
use Kiln\Http\WebSocket\PerMessageDeflate;
use Kiln\Http\WebSocket\Protocol;
use Kiln\Http\WebSocket\ProtocolViolation;
use Kiln\Http\WebSocket\WebSocketLimits;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * RFC 7692: compressed messages both ways, with and without context takeover, every window size, and the
 * bound on inflation. The client side is played by zlib directly, as a browser's deflater would.
 */
final class PerMessageDeflateTest extends TestCase
{
    private const MESSAGES = [
        'Hello',
        'Hello',
        '{"type":"chat","room":"lobby","text":"Hello, everyone in the lobby!"}',
        '{"type":"chat","room":"lobby","text":"Hello, everyone in the lobby!"}',
        '',
        'ünïcödé ✓ 😀',
    ];

    public function testTheRfcExampleHelloInflates(): void
    {
        // RFC 7692 §7.2.3.1: "Hello" compressed, without the tail.
        self::assertSame('Hello', (new PerMessageDeflate())->decompress("\xf2\x48\xcd\xc9\xc9\x07\x00", 100));
        // §7.2.3.3: the same with BFINAL set, and §7.2.3.4: an uncompressed (stored) block.
        self::assertSame('Hello', (new PerMessageDeflate())->decompress("\xf3\x48\xcd\xc9\xc9\x07\x00", 100));
        self::assertSame('Hello', (new PerMessageDeflate())->decompress("\x00\x05\x00\xfa\xffHello\x00", 100));
    }

    /** @return iterable<string, array{bool, bool, int, int}> */
    public static function variants(): iterable
    {
        yield 'context takeover both ways' => [false, false, 15, 15];
        yield 'server no context takeover' => [true, false, 15, 15];
        yield 'client no context takeover' => [false, true, 15, 15];
        yield 'no context takeover both ways' => [true, true, 15, 15];
        foreach ([9, 10, 12, 14] as $bits) {
            yield "window bits $bits" => [false, false, $bits, $bits];
        }
        yield 'small windows, no takeover' => [true, true, 9, 9];
    }

    #[DataProvider('variants')]
    public function testServerMessagesRoundTripThroughAClientInflater(bool $serverNoTakeover, bool $clientNoTakeover, int $serverBits, int $clientBits): void
    {
        $deflate = new PerMessageDeflate($serverNoTakeover, $clientNoTakeover, $serverBits, $clientBits);
        $protocol = new Protocol(new WebSocketLimits(), $deflate);
        $client = inflate_init(\ZLIB_ENCODING_RAW, ['window' => $serverBits]);
        self::assertNotFalse($client);
        foreach ([...self::MESSAGES, random_bytes(3000), str_repeat('repeat ', 20000)] as $message) {
            $frame = $protocol->encodeMessage($message, !mb_check_encoding($message, 'UTF-8'));
            self::assertSame(0x40, \ord($frame[0]) & 0x40, 'RSV1 marks a compressed message');
            $payload = self::serverPayload($frame);
            if ($serverNoTakeover) {
                // Each message must inflate on its own, with a fresh context.
                $fresh = inflate_init(\ZLIB_ENCODING_RAW, ['window' => $serverBits]);
                self::assertNotFalse($fresh);
                self::assertSame($message, inflate_add($fresh, $payload . "\x00\x00\xff\xff", \ZLIB_SYNC_FLUSH));
            }
            self::assertSame($message, inflate_add($client, $payload . "\x00\x00\xff\xff", \ZLIB_SYNC_FLUSH));
        }
    }

    #[DataProvider('variants')]
    public function testClientMessagesRoundTripThroughTheServer(bool $serverNoTakeover, bool $clientNoTakeover, int $serverBits, int $clientBits): void
    {
        $messages = [...self::MESSAGES, str_repeat('repeat ', 20000)];
        $frames = '';
        $client = deflate_init(\ZLIB_ENCODING_RAW, ['window' => $clientBits]);
        self::assertNotFalse($client);
        foreach ($messages as $i => $message) {
            if ($clientNoTakeover) {
                $client = deflate_init(\ZLIB_ENCODING_RAW, ['window' => $clientBits]);
                self::assertNotFalse($client);
            }
            // As a browser does: zlib writes nothing for an empty message, which goes as a lone 0x00 (§7.2.3.6).
            $payload = substr((string) deflate_add($client, $message, \ZLIB_SYNC_FLUSH), 0, -4) ?: "\x00";
            // Every other message fragmented in two: RSV1 on the first frame only.
            $frames .= $i % 2 === 0
                ? FrameHarness::frame(0xC1, $payload)
                : FrameHarness::frame(0x41, substr($payload, 0, 3)) . FrameHarness::frame(0x89, 'between') . FrameHarness::frame(0x80, substr($payload, 3));
        }
        $events = FrameHarness::parse($frames, null, static fn() => new PerMessageDeflate($serverNoTakeover, $clientNoTakeover, $serverBits, $clientBits));
        $expected = [];
        foreach ($messages as $i => $message) {
            if ($i % 2 === 1) {
                $expected[] = ['ping', 'between'];
            }
            $expected[] = ['text', $message];
        }
        self::assertSame($expected, $events);
    }

    public function testContextTakeoverMakesARepeatedMessageSmaller(): void
    {
        $message = self::MESSAGES[2];
        $takeover = new PerMessageDeflate();
        $first = $takeover->compress($message);
        self::assertLessThan(\strlen($first) / 2, \strlen($takeover->compress($message)));
        $noTakeover = new PerMessageDeflate(serverNoContextTakeover: true);
        self::assertSame($first, $noTakeover->compress($message));
        self::assertSame($first, $noTakeover->compress($message), 'without takeover each message starts afresh');
    }

    public function testUncompressedMessagesMayBeMixedWithCompressedOnes(): void
    {
        $input = FrameHarness::text('plain') . FrameHarness::frame(0xC1, "\xf2\x48\xcd\xc9\xc9\x07\x00") . FrameHarness::binary('raw');
        self::assertSame([['text', 'plain'], ['text', 'Hello'], ['binary', 'raw']], FrameHarness::parse($input, null, static fn() => new PerMessageDeflate()));
    }

    public function testAClientThatEndsItsStreamWithAFinalBlockCanSendAnotherMessage(): void
    {
        $input = FrameHarness::frame(0xC1, "\xf3\x48\xcd\xc9\xc9\x07\x00") . FrameHarness::frame(0xC1, "\xf3\x48\xcd\xc9\xc9\x07\x00");
        self::assertSame([['text', 'Hello'], ['text', 'Hello']], FrameHarness::parse($input, null, static fn() => new PerMessageDeflate()));
    }

    public function testADecompressionBombStopsAtTheLimitWithoutInflatingWhole(): void
    {
        $bomb = (string) gzdeflate(str_repeat("\0", 50 * 1024 * 1024), 9, \ZLIB_ENCODING_RAW);
        self::assertLessThan(100 * 1024, \strlen($bomb));
        $deflate = new PerMessageDeflate();
        memory_reset_peak_usage();
        $before = memory_get_usage();
        try {
            $deflate->decompress($bomb, 1024 * 1024);
            self::fail('The bomb must be refused');
        } catch (InflateException $e) {
            self::assertSame(1009, $e->closeCode);
        }
        // At most the limit plus one slice's worth of output was ever held (PHP's own count of its strings).
        self::assertLessThan(4 * 1024 * 1024, memory_get_peak_usage() - $before);
    }

    public function testADecompressionBombIsAViolation1009ThroughTheProtocol(): void
    {
        $bomb = (string) gzdeflate(str_repeat('a', 5 * 1024 * 1024), 9, \ZLIB_ENCODING_RAW);
        $protocol = new Protocol(new WebSocketLimits(), new PerMessageDeflate());
        $events = $protocol->feed(FrameHarness::frame(0xC2, $bomb));
        self::assertCount(1, $events);
        self::assertInstanceOf(ProtocolViolation::class, $events[0]);
        self::assertSame(1009, $events[0]->code);
    }

    public function testAMessageInflatingToExactlyTheLimitIsAccepted(): void
    {
        $message = str_repeat('x', 5000);
        self::assertSame($message, (new PerMessageDeflate())->decompress((string) gzdeflate($message, 6, \ZLIB_ENCODING_RAW), 5000));
        $this->expectException(InflateException::class);
        (new PerMessageDeflate())->decompress((string) gzdeflate($message, 6, \ZLIB_ENCODING_RAW), 4999);
    }

    public function testCorruptDataIsInvalidData1007(): void
    {
        try {
            (new PerMessageDeflate())->decompress("\xff\xff\xff", 1000);
            self::fail('Corrupt data must be refused');
        } catch (InflateException $e) {
            self::assertSame(1007, $e->closeCode);
        }
    }

    public function testAnEmptyMessageCompressesToALoneEmptyBlockHeader(): void
    {
        $deflate = new PerMessageDeflate();
        $deflate->compress('Hello');
        self::assertSame("\x00", $deflate->compress(''));
        $client = inflate_init(\ZLIB_ENCODING_RAW);
        self::assertNotFalse($client);
        $protocol = new Protocol(new WebSocketLimits(), new PerMessageDeflate());
        foreach (['Hello', '', 'Hello', '', ''] as $message) {
            $frame = $protocol->encodeMessage($message, false);
            self::assertSame($message, inflate_add($client, self::serverPayload($frame) . "\x00\x00\xff\xff", \ZLIB_SYNC_FLUSH));
        }
    }

    public function testAnEmptyCompressedPayloadIsAnEmptyMessageAndSpoilsNothing(): void
    {
        $input = FrameHarness::frame(0xC1, '') . FrameHarness::frame(0xC1, "\xf2\x48\xcd\xc9\xc9\x07\x00") . FrameHarness::frame(0xC1, "\x00");
        self::assertSame([['text', ''], ['text', 'Hello'], ['text', '']], FrameHarness::parse($input, null, static fn() => new PerMessageDeflate()));
    }

    public function testWindowBitsOutsideNineToFifteenAreRefused(): void
    {
        $this->expectException(\ValueError::class);
        new PerMessageDeflate(serverWindowBits: 8);
    }

    private static function serverPayload(string $frame): string
    {
        $size = \ord($frame[1]);
        return substr($frame, $size === 126 ? 4 : ($size === 127 ? 10 : 2));
    }
}
