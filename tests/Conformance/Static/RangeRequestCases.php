<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

use PHPUnit\Framework\Attributes\DataProvider;

/** Range requests on /data.bin (100 000 bytes) over real sockets: 206, multipart/byteranges, 416, ignored. */
abstract class RangeRequestCases extends StaticTestCase
{
    private const SIZE = 100_000;

    /** @return iterable<string, array{string, int, int}> header, first, last */
    public static function single(): iterable
    {
        yield 'first bytes' => ['bytes=0-99', 0, 99];
        yield 'middle' => ['bytes=5000-5999', 5000, 5999];
        yield 'one byte' => ['bytes=42-42', 42, 42];
        yield 'last byte' => ['bytes=99999-99999', 99_999, 99_999];
        yield 'suffix' => ['bytes=-500', 99_500, 99_999];
        yield 'suffix longer than the file' => ['bytes=-1000000', 0, 99_999];
        yield 'open ended' => ['bytes=99000-', 99_000, 99_999];
        yield 'last past the end' => ['bytes=99990-200000', 99_990, 99_999];
        yield 'more than one piece of the sender' => ['bytes=1-80000', 1, 80_000];
        yield 'overlapping ranges coalesced into one' => ['bytes=0-499,400-999,100-200', 0, 999];
        yield 'adjacent ranges coalesced into one' => ['bytes=0-9,10-19', 0, 19];
        yield 'unsatisfiable member dropped' => ['bytes=500000-,10-20', 10, 20];
        yield 'upper-case unit' => ['Bytes=10-20', 10, 20];
    }

    #[DataProvider('single')]
    public function testASingleRangeIs206WithContentRangeAndExactBytes(string $range, int $first, int $last): void
    {
        $response = self::get('/data.bin', ['Range' => $range]);
        self::assertSame(206, $response['status']);
        self::assertSame("bytes $first-$last/" . self::SIZE, self::header($response, 'Content-Range'));
        self::assertSame((string) ($last - $first + 1), self::header($response, 'Content-Length'));
        self::assertSame('application/octet-stream', self::header($response, 'Content-Type'));
        self::assertSame(substr(self::data(), $first, $last - $first + 1), $response['body']);
        self::assertNotNull(self::header($response, 'ETag'));
    }

    /** @return iterable<string, array{string, list<array{int, int}>}> */
    public static function multiple(): iterable
    {
        yield 'two' => ['bytes=0-9,100-109', [[0, 9], [100, 109]]];
        yield 'request order kept' => ['bytes=90000-90009,0-0', [[90_000, 90_009], [0, 0]]];
        yield 'with suffix' => ['bytes=0-1,-2,50000-50001', [[0, 1], [99_998, 99_999], [50_000, 50_001]]];
        yield 'suffix inside an open end merges' => ['bytes=0-1,-2,50000-', [[0, 1], [50_000, 99_999]]];
        yield 'overlaps merged, the rest kept' => ['bytes=500-599,0-9,550-700,5-20', [[500, 700], [0, 20]]];
        yield 'large parts' => ['bytes=0-70000,80000-99999', [[0, 70_000], [80_000, 99_999]]];
    }

    /** @param list<array{int, int}> $expected */
    #[DataProvider('multiple')]
    public function testSeveralRangesAreAMultipartByterangesBodyOfExactLength(string $range, array $expected): void
    {
        $response = self::get('/data.bin', ['Range' => $range]);
        self::assertSame(206, $response['status']);
        self::assertNull(self::header($response, 'Content-Range'), 'no Content-Range on the whole multipart reply');
        self::assertSame((string) \strlen($response['body']), self::header($response, 'Content-Length'));
        $parts = self::parts($response);
        self::assertCount(\count($expected), $parts);
        foreach ($expected as $i => [$first, $last]) {
            self::assertSame('application/octet-stream', $parts[$i]['headers']['content-type'] ?? null);
            self::assertSame("bytes $first-$last/" . self::SIZE, $parts[$i]['headers']['content-range'] ?? null);
            self::assertSame(substr(self::data(), $first, $last - $first + 1), $parts[$i]['body'], "part $i");
        }
    }

    public function testMultipartPartsOfATextFileCarryItsType(): void
    {
        $response = self::get('/hello.txt', ['Range' => 'bytes=0-4,7-11']);
        $parts = self::parts($response);
        self::assertSame(['Hello', 'world'], array_column($parts, 'body'));
        self::assertSame('text/plain; charset=utf-8', $parts[0]['headers']['content-type'] ?? null);
    }

    /** @return iterable<string, array{string}> */
    public static function unsatisfiable(): iterable
    {
        yield 'first at the size' => ['bytes=100000-'];
        yield 'far past the end' => ['bytes=500000-600000'];
        yield 'zero-length suffix' => ['bytes=-0'];
        yield 'all members past the end' => ['bytes=100000-100001,200000-'];
    }

    #[DataProvider('unsatisfiable')]
    public function testRangesOutsideTheFileAre416WithTheSize(string $range): void
    {
        $response = self::get('/data.bin', ['Range' => $range]);
        self::assertSame(416, $response['status']);
        self::assertSame('bytes */' . self::SIZE, self::header($response, 'Content-Range'));
        self::assertStringNotContainsString(substr(self::data(), 0, 16), $response['body']);
    }

    public function testAnyRangeOfAnEmptyFileIs416(): void
    {
        $response = self::get('/empty.txt', ['Range' => 'bytes=0-']);
        self::assertSame(416, $response['status']);
        self::assertSame('bytes */0', self::header($response, 'Content-Range'));
    }

    /** @return iterable<string, array{string}> */
    public static function ignored(): iterable
    {
        yield 'other unit' => ['items=0-9'];
        yield 'reversed' => ['bytes=20-10'];
        yield 'garbage' => ['bytes=abc'];
        yield 'no unit' => ['0-9'];
        yield 'empty set' => ['bytes='];
        yield 'spaces inside a spec' => ['bytes=0 - 9'];
        yield 'more than 32 disjoint ranges' => ['bytes=' . implode(',', array_map(static fn(int $i): string => ($i * 100) . '-' . ($i * 100), range(0, 40)))];
    }

    #[DataProvider('ignored')]
    public function testMalformedOrAbusiveRangesAreIgnoredWithTheWholeFile(string $range): void
    {
        $response = self::get('/data.bin', ['Range' => $range]);
        self::assertSame(200, $response['status']);
        self::assertSame(self::data(), $response['body']);
    }

    public function testAThousandOverlappingRangesSendTheFileOnceNotAThousandTimes(): void
    {
        $response = self::get('/data.bin', ['Range' => 'bytes=' . implode(',', array_fill(0, 1000, '0-'))]);
        self::assertSame(206, $response['status']);
        self::assertSame('bytes 0-99999/100000', self::header($response, 'Content-Range'));
        self::assertSame(self::SIZE, \strlen($response['body']));
    }

    public function testHeadIgnoresRange(): void
    {
        $response = self::request('HEAD', '/data.bin', ['Range' => 'bytes=0-9']);
        self::assertSame(200, $response['status']);
        self::assertSame('100000', self::header($response, 'Content-Length'));
    }

    public function testARangeForAnHttp10ClientHasItsLength(): void
    {
        $response = self::request('GET', '/data.bin', ['Range' => 'bytes=0-9,20-29'], '1.0');
        self::assertSame(206, $response['status']);
        self::assertSame((string) \strlen($response['body']), self::header($response, 'Content-Length'));
        self::assertCount(2, self::parts($response));
    }

    private static function data(): string
    {
        return StaticSite::bytes(self::SIZE);
    }

    /**
     * Splits a multipart/byteranges body by the boundary of its Content-Type (RFC 2046).
     *
     * @param array{headers: array<string, list<string>>, body: string} $response
     * @return list<array{headers: array<string, string>, body: string}>
     */
    private static function parts(array $response): array
    {
        $type = (string) self::header($response, 'Content-Type');
        self::assertMatchesRegularExpression('~^multipart/byteranges; boundary=([0-9A-Za-z\'()+_,./:=?-]{1,70})$~', $type);
        $boundary = substr($type, (int) strpos($type, '=') + 1);
        $body = $response['body'];
        $close = "\r\n--$boundary--\r\n";
        self::assertStringEndsWith($close, $body, 'closed by the final delimiter');
        $body = substr($body, 0, -\strlen($close));
        $chunks = explode("\r\n--$boundary\r\n", $body);
        self::assertSame('', array_shift($chunks), 'nothing but an empty preamble');
        $parts = [];
        foreach ($chunks as $chunk) {
            [$head, $content] = explode("\r\n\r\n", $chunk, 2) + [1 => ''];
            $headers = [];
            foreach (explode("\r\n", $head) as $line) {
                [$name, $value] = explode(':', $line, 2) + [1 => ''];
                $headers[strtolower($name)] = trim($value);
            }
            $parts[] = ['headers' => $headers, 'body' => $content];
        }
        return $parts;
    }
}
