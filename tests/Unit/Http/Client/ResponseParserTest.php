<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Client;

use Kiln\Http\Client\Internal\ResponseEnd;
use Kiln\Http\Client\Internal\ResponseParser;
use PHPUnit\Framework\TestCase;

/** Every case runs twice through ParserHarness: whole buffer, then one byte at a time. */
final class ResponseParserTest extends TestCase
{
    public function testContentLengthBodyIsFramedAndConnectionIsReusable(): void
    {
        $events = ParserHarness::parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\nhello");
        self::assertEquals([
            ['head', 200, 'OK', '1.1', ['content-length' => ['5'], 'x-a' => ['1', '2']]],
            ['body', 'hello'],
            ['end', [], true],
        ], $events);
    }

    public function testZeroContentLengthEndsAtOnce(): void
    {
        $events = ParserHarness::parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", eof: false);
        self::assertSame(['end', [], true], $events[1]);
    }

    public function testIdenticalRepeatedContentLengthsAreAccepted(): void
    {
        $events = ParserHarness::parse("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok");
        self::assertSame(['body', 'ok'], $events[1]);
    }

    public function testChunkedBodyWithExtensionsAndTrailersIsDecoded(): void
    {
        $events = ParserHarness::parse(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            . "5;name=value;flag\r\nhello\r\n1 \t;x=\"y\"\r\n \r\nA\r\n0123456789\r\n0;last\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n",
        );
        self::assertEquals([
            ['head', 200, 'OK', '1.1', ['transfer-encoding' => ['chunked']]],
            ['body', 'hello 0123456789'],
            ['end', ['x-checksum' => ['abc'], 'x-other' => ['1']], true],
        ], $events);
    }

    public function testChunkedBodyWithoutTrailersEnds(): void
    {
        $events = ParserHarness::parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", eof: false);
        self::assertSame([['body', 'abc'], ['end', [], true]], \array_slice($events, 1));
    }

    public function testBodyWithoutFramingIsDelimitedByClose(): void
    {
        $events = ParserHarness::parse("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end\r\n");
        self::assertSame([['body', "until the end\r\n"], ['end', [], false]], \array_slice($events, 1));
    }

    public function testCloseDelimitedBodyWaitsForEof(): void
    {
        $events = ParserHarness::parse("HTTP/1.0 200 OK\r\n\r\npartial", eof: false);
        self::assertSame(['body', 'partial'], $events[1]);
        self::assertCount(2, $events);
    }

    public function testInterimResponsesAreSkipped(): void
    {
        $events = ParserHarness::parse(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
            . "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
        );
        self::assertSame(['head', 201, 'Created', '1.1', ['content-length' => ['2']]], $events[0]);
        self::assertCount(3, $events);
    }

    public function testHeadResponseHasNoBodyDespiteContentLength(): void
    {
        $events = ParserHarness::parse("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", ['HEAD'], eof: false);
        self::assertSame(['end', [], true], $events[1]);
    }

    public function testNoContentAndNotModifiedHaveNoBody(): void
    {
        $input = "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!";
        $events = ParserHarness::parse($input, ['GET', 'GET', 'GET']);
        self::assertSame(['head', 'end', 'head', 'end', 'head', 'body', 'end'], \array_column($events, 0));
        self::assertSame(['body', '!'], $events[5]);
    }

    public function testConsecutiveResponsesOnOneConnectionAreSeparated(): void
    {
        $one = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none";
        $two = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n";
        $events = ParserHarness::parse($one . $two, ['GET', 'POST'], eof: false);
        self::assertSame(['body', 'one'], $events[1]);
        self::assertSame(['body', 'two'], $events[4]);
        self::assertSame(['end', [], true], $events[5]);
    }

    public function testConnectionCloseMakesTheConnectionNotReusable(): void
    {
        $events = ParserHarness::parse("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n", eof: false);
        self::assertSame(['end', [], false], $events[1]);
    }

    public function testHttp10IsReusableOnlyWithKeepAlive(): void
    {
        $plain = ParserHarness::parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", eof: false);
        $kept = ParserHarness::parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", eof: false);
        self::assertSame(['end', [], false], $plain[1]);
        self::assertSame(['end', [], true], $kept[1]);
    }

    public function testStatusLineWithoutReasonAndHeaderValuesAreTrimmed(): void
    {
        $events = ParserHarness::parse("HTTP/1.1 404\r\nX-Space: \t padded \t\r\nX-Empty:\r\nContent-Length: 0\r\n\r\n");
        self::assertSame(['head', 404, '', '1.1', ['x-space' => ['padded'], 'x-empty' => [''], 'content-length' => ['0']]], $events[0]);
    }

    public function testBodyBytesThatLookLikeBareLfAreNotHeaderErrors(): void
    {
        $events = ParserHarness::parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\na\nb");
        self::assertSame(['body', "a\nb"], $events[1]);
    }

    public function testBytesAfterTheResponseStayBuffered(): void
    {
        $parser = new ResponseParser();
        $parser->begin('GET');
        $parser->feed("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxJUNK");
        $parser->next();
        self::assertSame('x', $parser->next());
        $end = $parser->next();
        self::assertInstanceOf(ResponseEnd::class, $end);
        self::assertSame(4, $parser->buffered());
    }

    public function testBeginBeforeTheEndIsAProgrammingError(): void
    {
        $parser = new ResponseParser();
        $parser->begin('GET');
        $this->expectException(\Error::class);
        $parser->begin('GET');
    }
}
