<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Static;

use Kiln\Http\Static\ByteRange;
use Kiln\Http\Static\MultipartByteranges;
use Kiln\Http\Static\SliceStream;
use PHPUnit\Framework\TestCase;

/** The body of a 206: file slices and part headers read as one stream of the announced size. */
final class ByterangesBodyTest extends TestCase
{
    private const DATA = '0123456789abcdefghijklmnopqrstuvwxyz';

    public function testAMultipartBodyHasTheExactLayoutAndSize(): void
    {
        $multipart = new MultipartByteranges([new ByteRange(0, 1), new ByteRange(30, 35)], 36, 'text/plain', 'BOUND');
        self::assertSame('multipart/byteranges; boundary=BOUND', $multipart->contentType());
        $body = $this->read($multipart->segments());
        self::assertSame(
            "\r\n--BOUND\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/36\r\n\r\n01"
            . "\r\n--BOUND\r\nContent-Type: text/plain\r\nContent-Range: bytes 30-35/36\r\n\r\nuvwxyz"
            . "\r\n--BOUND--\r\n",
            $body,
        );
        self::assertSame(\strlen($body), SliceStream::sizeOf($multipart->segments()));
    }

    public function testTheRandomBoundaryIsValidAndNotInTheHeaders(): void
    {
        $multipart = new MultipartByteranges([new ByteRange(0, 1), new ByteRange(3, 4)], 36, 'text/plain');
        self::assertMatchesRegularExpression('~^multipart/byteranges; boundary=[0-9a-f]{24}$~', $multipart->contentType());
    }

    public function testABoundaryOutsideTheRfcSetIsAProgrammingError(): void
    {
        $this->expectException(\ValueError::class);
        new MultipartByteranges([new ByteRange(0, 1)], 36, 'text/plain', "bad\r\nboundary");
    }

    public function testASliceStreamLooksLikeARegularFileOfItsSize(): void
    {
        $stream = SliceStream::open($this->file(), [[5, 3], 'xy', [0, 1]]);
        $stat = fstat($stream);
        self::assertNotFalse($stat);
        self::assertSame(0100000, $stat['mode'] & 0170000);
        self::assertSame(6, $stat['size']);
        self::assertSame(0, ftell($stream));
        self::assertSame('567xy0', stream_get_contents($stream));
        self::assertTrue(feof($stream));
        fclose($stream);
    }

    public function testLargeSlicesAreReadInBoundedPieces(): void
    {
        $file = fopen('php://temp', 'w+b');
        self::assertNotFalse($file);
        fwrite($file, str_repeat('a', 300_000));
        $stream = SliceStream::open($file, [[1000, 250_000]]);
        $total = 0;
        while (!feof($stream)) {
            $piece = (string) fread($stream, 1 << 20);
            self::assertLessThanOrEqual(65536, \strlen($piece));
            $total += \strlen($piece);
        }
        self::assertSame(250_000, $total);
        fclose($stream);
    }

    public function testAFileThatShrankEndsTheStreamEarly(): void
    {
        $stream = SliceStream::open($this->file(), [[30, 100]]);
        self::assertSame('uvwxyz', stream_get_contents($stream));
        fclose($stream);
    }

    /** @param list<string|array{int, int}> $segments */
    private function read(array $segments): string
    {
        $stream = SliceStream::open($this->file(), $segments);
        $body = (string) stream_get_contents($stream);
        fclose($stream);
        return $body;
    }

    /** @return resource */
    private function file(): mixed
    {
        $file = fopen('php://temp', 'w+b');
        self::assertNotFalse($file);
        fwrite($file, self::DATA);
        return $file;
    }
}
