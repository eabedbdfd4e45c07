<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\RelayFrames;
use Kiln\Server\ServerException;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class RelayFramesTest extends TestCase
{
    /** @return iterable<string, array{list<string>}> */
    public static function bodies(): iterable
    {
        yield 'one short body' => [['hello']];
        yield 'an empty body between two' => [['a', '', 'b']];
        yield 'binary with every byte value' => [[implode('', array_map('chr', range(0, 255)))]];
        yield 'a body of exactly 256 bytes (a length byte of 0x01 0x00)' => [[str_repeat('x', 256)]];
        yield 'many small bodies' => [array_map(static fn(int $i): string => "message $i", range(1, 50))];
    }

    /** @param list<string> $bodies */
    #[DataProvider('bodies')]
    public function testBodiesComeBackWholeFedAtOnce(array $bodies): void
    {
        $frames = new RelayFrames();
        self::assertSame($bodies, $frames->feed(implode('', array_map(RelayFrames::encode(...), $bodies))));
        self::assertFalse($frames->isPartial());
    }

    /** @param list<string> $bodies */
    #[DataProvider('bodies')]
    public function testBodiesComeBackWholeFedByteByByte(array $bodies): void
    {
        $frames = new RelayFrames();
        $wire = implode('', array_map(RelayFrames::encode(...), $bodies));
        $out = [];
        for ($i = 0, $n = \strlen($wire); $i < $n; $i++) {
            array_push($out, ...$frames->feed($wire[$i]));
            if ($i < $n - 1 && $out !== $bodies) {
                self::assertTrue($frames->isPartial() || \count($out) < \count($bodies));
            }
        }
        self::assertSame($bodies, $out);
        self::assertFalse($frames->isPartial());
    }

    public function testAMebibyteBodyArrivesInSocketSizedPieces(): void
    {
        $body = random_bytes(1 << 20);
        $wire = RelayFrames::encode($body) . RelayFrames::encode('next');
        $frames = new RelayFrames();
        $out = [];
        foreach (str_split($wire, 65536) as $piece) {
            array_push($out, ...$frames->feed($piece));
        }
        self::assertSame([$body, 'next'], $out);
    }

    public function testTheLengthIsFourBytesBigEndian(): void
    {
        self::assertSame("\x00\x00\x01\x02" . str_repeat('y', 258), RelayFrames::encode(str_repeat('y', 258)));
    }

    public function testAFrameLongerThanTheBoundIsRefusedFromItsHeaderAlone(): void
    {
        $frames = new RelayFrames(1000);
        self::assertSame(['ok'], $frames->feed(RelayFrames::encode('ok')));
        $this->expectException(ServerException::class);
        $this->expectExceptionMessage('1001 bytes is over the bound of 1000');
        $frames->feed(pack('N', 1001));
    }

    public function testAFrameOfExactlyTheBoundIsTaken(): void
    {
        $frames = new RelayFrames(1000);
        self::assertSame([str_repeat('z', 1000)], $frames->feed(RelayFrames::encode(str_repeat('z', 1000))));
    }

    public function testAnIncompleteFrameIsHeldUntilItsLastByte(): void
    {
        $frames = new RelayFrames();
        $wire = RelayFrames::encode('abcdef');
        self::assertSame([], $frames->feed(substr($wire, 0, 7)));
        self::assertTrue($frames->isPartial());
        self::assertSame(['abcdef'], $frames->feed(substr($wire, 7)));
    }
}
