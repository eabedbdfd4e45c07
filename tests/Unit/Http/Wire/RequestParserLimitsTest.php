<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Wire;

use Kiln\Http\Limits;
use Kiln\Http\Wire\ParseException;
use Kiln\Http\Wire\RequestParser;
use PHPUnit\Framework\TestCase;

/** Every limit at its exact boundary: at the limit accepted, one over rejected with its status. */
final class RequestParserLimitsTest extends TestCase
{
    public function testRequestLineAtTheLimitIsAcceptedAndOneOverIs414(): void
    {
        $limits = new Limits(requestLine: 64);
        $line = static fn(int $length): string => 'GET /' . str_repeat('a', $length - 14) . ' HTTP/1.1';
        self::assertSame(64, \strlen($line(64)));
        ParserHarness::head($line(64) . "\r\nHost: a\r\n\r\n", $limits);
        ParserHarness::assertRejected(414, $line(65) . "\r\nHost: a\r\n\r\n", $limits);
    }

    public function testOverlongRequestLineIsRejectedBeforeItEnds(): void
    {
        ParserHarness::assertRejected(414, 'GET /' . str_repeat('a', 100), new Limits(requestLine: 64));
    }

    public function testHeaderLineAtTheLimitIsAcceptedAndOneOverIs431(): void
    {
        $limits = new Limits(headerLine: 40);
        $field = static fn(int $length): string => 'X-Long: ' . str_repeat('v', $length - 8);
        self::assertSame('v', ParserHarness::head("GET / HTTP/1.1\r\nHost: a\r\n" . $field(40) . "\r\n\r\n", $limits)->header('x-long')[0]);
        ParserHarness::assertRejected(431, "GET / HTTP/1.1\r\nHost: a\r\n" . $field(41) . "\r\n\r\n", $limits);
    }

    public function testHeadAtTheByteLimitIsAcceptedAndOneOverIs431(): void
    {
        $head = static fn(int $size): string => "GET / HTTP/1.1\r\nHost: a\r\nX: " . str_repeat('v', $size - 32) . "\r\n\r\n";
        self::assertSame(100, \strlen($head(100)));
        ParserHarness::head($head(100), new Limits(headerBytes: 100));
        ParserHarness::assertRejected(431, $head(101), new Limits(headerBytes: 100));
    }

    public function testHeadOverTheByteLimitIsRejectedWithoutItsEnd(): void
    {
        $parser = new RequestParser(new Limits(headerBytes: 100));
        $parser->feed("GET / HTTP/1.1\r\nHost: a\r\nX: " . str_repeat('v', 60));
        self::assertNull($parser->next());
        $parser->feed(str_repeat('v', 12));
        self::assertSame(100, $parser->buffered());
        $this->expectExceptionObject(new ParseException(431, 'Header block larger than 100 bytes'));
        $parser->next();
    }

    public function testHeaderCountAtTheLimitIsAcceptedAndOneOverIs431(): void
    {
        $limits = new Limits(headerCount: 3);
        ParserHarness::head("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n", $limits);
        ParserHarness::assertRejected(431, "GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", $limits);
    }

    public function testContentLengthAtTheBodyLimitIsAcceptedAndOneOverIs413(): void
    {
        $limits = new Limits(bodySize: 5);
        self::assertSame(['body', '12345'], ParserHarness::parse("PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n12345", $limits)[1]);
        ParserHarness::assertRejected(413, "PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\n123456", $limits);
    }

    public function testA413FromContentLengthCarriesTheHeadItWasReadFromAndAMalformedHeadCarriesNone(): void
    {
        $parser = new RequestParser(new Limits(bodySize: 5));
        $parser->feed("POST /form?x=1 HTTP/1.0\r\nHost: a\r\nUser-Agent: probe\r\nContent-Length: 6\r\n\r\n");
        try {
            $parser->next();
            self::fail('no 413');
        } catch (ParseException $e) {
            self::assertSame(413, $e->status);
            self::assertSame(['POST', '/form?x=1', '1.0', 'probe', 6], [$e->head?->method, $e->head?->target, $e->head?->version, $e->head?->header('user-agent'), $e->head?->contentLength]);
        }
        $parser = new RequestParser(new Limits());
        $parser->feed("GET / HTTP/1.1\r\n\r\n");
        try {
            $parser->next();
            self::fail('no 400');
        } catch (ParseException $e) {
            self::assertSame(400, $e->status);
            self::assertNull($e->head);
        }
    }

    public function testChunkedBodyAtTheLimitIsAcceptedAndOneOverIs413(): void
    {
        $limits = new Limits(bodySize: 5);
        $te = "PUT / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
        self::assertSame(['body', '12345'], ParserHarness::parse("{$te}3\r\n123\r\n2\r\n45\r\n0\r\n\r\n", $limits)[1]);
        $events = ParserHarness::parse("{$te}3\r\n123\r\n3\r\n456\r\n0\r\n\r\n", $limits);
        self::assertSame([['body', '123'], ['error', 413, 'Request body larger than 5 bytes']], \array_slice($events, 1));
    }

    public function testTrailersAreBoundByTheHeaderLimits(): void
    {
        $te = "PUT / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
        self::assertSame(['end', ['a' => ['1'], 'b' => ['2']]], ParserHarness::parse("{$te}A: 1\r\nB: 2\r\n\r\n", new Limits(headerCount: 2))[1]);
        ParserHarness::assertRejected(431, "{$te}A: 1\r\nB: 2\r\nC: 3\r\n\r\n", new Limits(headerCount: 2));
        ParserHarness::assertRejected(431, "{$te}A: " . str_repeat('x', 200), new Limits(headerBytes: 100));
    }

    public function testChunkExtensionsAreBounded(): void
    {
        $te = "PUT / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
        $ext = static fn(int $length): string => '1;x=' . str_repeat('e', $length - 4);
        self::assertSame(['body', 'z'], ParserHarness::parse($te . $ext(4096) . "\r\nz\r\n0\r\n\r\n")[1]);
        ParserHarness::assertRejected(400, $te . $ext(4097) . "\r\nz\r\n0\r\n\r\n");
    }

    public function testAHeadFedOneByteAtATimeIsScannedIncrementally(): void
    {
        // 60 KB of header fields fed one byte at a time; quadratic rescanning would take minutes.
        $input = "GET / HTTP/1.1\r\nHost: a\r\n" . str_repeat("X-Filler: " . str_repeat('f', 90) . "\r\n", 600) . "\r\n";
        $events = ParserHarness::run(str_split($input), new Limits(headerCount: 1000));
        self::assertSame('head', $events[0][0]);
    }
}
