<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\WebSocket\PerMessageDeflate;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * Streams of many frames, good and damaged, made from fixed seeds: however the stream is cut into reads,
 * the events are the same as from one read.
 */
final class ProtocolResumabilityTest extends TestCase
{
    /** @return iterable<string, array{int, bool}> */
    public static function seeds(): iterable
    {
        foreach (range(1, 40) as $seed) {
            yield "seed $seed" => [$seed, $seed % 4 === 0];
        }
    }

    #[DataProvider('seeds')]
    public function testAnyCutOfAStreamGivesTheEventsOfOneRead(int $seed, bool $deflate): void
    {
        mt_srand($seed);
        $stream = self::stream($deflate);
        if (mt_rand(0, 2) === 0) {
            $at = mt_rand(0, \strlen($stream) - 1);
            $stream[$at] = \chr(mt_rand(0, 255)); // damage one byte
        }
        $factory = $deflate ? static fn() => new PerMessageDeflate() : null;
        $whole = FrameHarness::run([$stream], null, $factory);
        self::assertNotSame([], $whole);
        for ($round = 0; $round < 5; $round++) {
            $feeds = [];
            for ($offset = 0; $offset < \strlen($stream); $offset += $step) {
                $step = mt_rand(1, 1 + mt_rand(0, 1) * 300);
                $feeds[] = substr($stream, $offset, $step);
            }
            self::assertSame($whole, FrameHarness::run($feeds, null, $factory), "seed $seed, round $round");
        }
    }

    private static function stream(bool $deflate): string
    {
        $texts = ['a', 'é', '€uro', '😀 ok', str_repeat('ß', 100), str_repeat('x', 300), '', 'plain'];
        $invalid = ["bad \xC0\x80", "cut \xF0\x9F", "\xED\xA0\x80"];
        $stream = '';
        $frames = mt_rand(5, 30);
        for ($i = 0; $i < $frames; $i++) {
            $kind = mt_rand(0, 29) === 0 ? 9 : mt_rand(0, 8); // 9: a frame with any opcode, rarely
            $text = mt_rand(0, 24) === 0 ? $invalid[mt_rand(0, 2)] : $texts[mt_rand(0, \count($texts) - 1)];
            if ($kind < 4) {
                $stream .= FrameHarness::frame(0x81, $text, self::bytes(4));
            } elseif ($kind < 6) {
                $parts = str_split($text, max(1, intdiv(\strlen($text), mt_rand(1, 4))));
                $stream .= FrameHarness::text((string) array_shift($parts), $parts === []);
                while ($parts !== []) {
                    $part = (string) array_shift($parts);
                    if (mt_rand(0, 1) === 1) {
                        $stream .= FrameHarness::frame(0x89, 'p');
                    }
                    $stream .= FrameHarness::continuation($part, $parts === []);
                }
            } elseif ($kind < 7) {
                $stream .= FrameHarness::frame(0x82, self::bytes(mt_rand(0, 200)), self::bytes(4));
            } elseif ($kind < 8 && $deflate) {
                $stream .= FrameHarness::frame(0xC1, (string) gzdeflate($text, 6, \ZLIB_ENCODING_RAW));
            } elseif ($kind < 9) {
                $stream .= FrameHarness::frame(0x8A, substr($text, 0, 20));
            } else {
                $stream .= FrameHarness::frame(0x80 | mt_rand(0, 15), substr($text, 0, 10));
            }
        }
        return $stream . FrameHarness::close(1000, 'end');
    }

    /** Bytes from the seeded generator, so that a failing seed makes the same stream again. */
    private static function bytes(int $count): string
    {
        $bytes = '';
        for ($i = 0; $i < $count; $i++) {
            $bytes .= \chr(mt_rand(0, 255));
        }
        return $bytes;
    }
}
