<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Wire;

use Kiln\Http\Limits;
use Kiln\Http\Wire\BodyChunk;
use Kiln\Http\Wire\MessageEnd;
use Kiln\Http\Wire\ParseException;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\RequestParser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** Every case goes through ParserHarness::parse(): one feed, then one byte at a time, same result. */
final class RequestParserTest extends TestCase
{
    public function testSimpleGetIsParsed(): void
    {
        $head = ParserHarness::head("GET /search?q=kiln&x=1 HTTP/1.1\r\nHost: Example.COM:8080\r\nAccept:  text/html \t\r\nX-Empty:\r\n\r\n");
        self::assertSame('GET', $head->method);
        self::assertSame('/search?q=kiln&x=1', $head->target);
        self::assertSame('/search', $head->path);
        self::assertSame('q=kiln&x=1', $head->query);
        self::assertSame('1.1', $head->version);
        self::assertSame('example.com', $head->host);
        self::assertSame(['host' => ['Example.COM:8080'], 'accept' => ['text/html'], 'x-empty' => ['']], $head->headers);
        self::assertFalse($head->hasBody());
        self::assertTrue($head->keepAlive);
        self::assertFalse($head->expectContinue);
    }

    public function testABodilessRequestLeavesTheParserIdle(): void
    {
        self::assertSame(['rest', 0, true], ParserHarness::parse("GET / HTTP/1.1\r\nHost: a\r\n\r\n")[1]);
    }

    public function testRepeatedFieldsKeepArrivalOrderAndListsStayOneValue(): void
    {
        $head = ParserHarness::head("GET / HTTP/1.1\r\nHost: a\r\nAccept: a, b\r\nX-A: 1\r\naccept: c\r\n\r\n");
        self::assertSame(['a, b', 'c'], $head->headers['accept']);
        self::assertSame('a, b', $head->header('accept'));
    }

    public function testFieldValuesMayHoldTabsAndObsText(): void
    {
        $head = ParserHarness::head("GET / HTTP/1.1\r\nHost: a\r\nX-V: caf\xC3\xA9\tnoir\r\n\r\n");
        self::assertSame("caf\xC3\xA9\tnoir", $head->header('x-v'));
    }

    public function testUnknownButWellFormedMethodIsAccepted(): void
    {
        self::assertSame('PURGE-ALL', ParserHarness::head("PURGE-ALL /x HTTP/1.1\r\nHost: a\r\n\r\n")->method);
    }

    public function testAbsoluteFormAuthorityOverridesTheHostHeader(): void
    {
        $head = ParserHarness::head("GET http://Real.Example:81/p/q?x=1 HTTP/1.1\r\nHost: other\r\n\r\n");
        self::assertSame('real.example', $head->host);
        self::assertSame('/p/q', $head->path);
        self::assertSame('x=1', $head->query);
        self::assertSame('http://Real.Example:81/p/q?x=1', $head->target);
    }

    public function testAbsoluteFormWithoutPathHasPathSlash(): void
    {
        $head = ParserHarness::head("GET HTTPS://h?a HTTP/1.1\r\nHost: h\r\n\r\n");
        self::assertSame(['/', 'a', 'h'], [$head->path, $head->query, $head->host]);
    }

    public function testAsteriskFormIsAcceptedForOptions(): void
    {
        $head = ParserHarness::head("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n");
        self::assertSame(['*', '*', ''], [$head->target, $head->path, $head->query]);
    }

    public function testConnectIsNotImplemented(): void
    {
        ParserHarness::assertRejected(501, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    }

    public function testHttp10MayOmitHost(): void
    {
        $head = ParserHarness::head("GET / HTTP/1.0\r\n\r\n");
        self::assertSame(['1.0', ''], [$head->version, $head->host]);
    }

    public function testIpLiteralHostsAreAccepted(): void
    {
        self::assertSame('[::1]', ParserHarness::head("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n")->host);
        self::assertSame('127.0.0.1', ParserHarness::head("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")->host);
        self::assertSame('a', ParserHarness::head("GET / HTTP/1.1\r\nHost: a:\r\n\r\n")->host);
    }

    public function testUpToFourLeadingEmptyLinesAreSkipped(): void
    {
        self::assertSame('/', ParserHarness::head(str_repeat("\r\n", 4) . "GET / HTTP/1.1\r\nHost: a\r\n\r\n")->path);
    }

    public function testAFifthLeadingEmptyLineIsRejected(): void
    {
        ParserHarness::assertRejected(400, str_repeat("\r\n", 5) . "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    }

    public function testContentLengthBodyIsReturnedThenMessageEnd(): void
    {
        $events = ParserHarness::parse("POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world");
        self::assertSame(RequestHead::BODY_LENGTH, $events[0][1]->bodyKind);
        self::assertSame(11, $events[0][1]->contentLength);
        self::assertSame([['body', 'hello world'], ['end', []], ['rest', 0, true]], \array_slice($events, 1));
    }

    public function testBodyBytesAreReturnedAsSoonAsTheyArrive(): void
    {
        $parser = new RequestParser(new Limits());
        $parser->feed("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc");
        self::assertInstanceOf(RequestHead::class, $parser->next());
        self::assertEquals(new BodyChunk('abc'), $parser->next());
        self::assertNull($parser->next());
        self::assertFalse($parser->isIdle());
        $parser->feed('defghijGET');
        self::assertEquals(new BodyChunk('defghij'), $parser->next());
        self::assertEquals(new MessageEnd(), $parser->next());
        self::assertNull($parser->next());
        self::assertSame(3, $parser->buffered());
        self::assertFalse($parser->isIdle());
    }

    public function testContentLengthZeroMeansNoBody(): void
    {
        $events = ParserHarness::parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 000\r\n\r\n");
        self::assertFalse($events[0][1]->hasBody());
        self::assertSame(['rest', 0, true], $events[1]);
    }

    public function testChunkedBodyWithExtensionsAndTrailers(): void
    {
        $events = ParserHarness::parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n"
            . "5;name=value\r\nhello\r\n"
            . "1 ; a ; b = \"q \\\"x\\\" ;\"\r\n \r\n"
            . "0000000000000005\r\nworld\r\n"
            . "A\r\n0123456789\r\n"
            . "0;last\r\nX-Checksum: abc\r\nX-Checksum: def\r\nServer-Timing: t;dur=1\r\n\r\n");
        self::assertSame(RequestHead::BODY_CHUNKED, $events[0][1]->bodyKind);
        self::assertSame(-1, $events[0][1]->contentLength);
        self::assertSame([
            ['body', 'hello world0123456789'],
            ['end', ['x-checksum' => ['abc', 'def'], 'server-timing' => ['t;dur=1']]],
            ['rest', 0, true],
        ], \array_slice($events, 1));
    }

    public function testChunkedBodyWithoutTrailersEndsWithEmptyTrailers(): void
    {
        $events = ParserHarness::parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\na\r\n\r\n0\r\n\r\n");
        self::assertSame([['body', "a\r\n"], ['end', []], ['rest', 0, true]], \array_slice($events, 1));
    }

    public function testEmptyChunkedBodyHasNoBodyChunk(): void
    {
        $events = ParserHarness::parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
        self::assertSame([['end', []], ['rest', 0, true]], \array_slice($events, 1));
    }

    public function testFramingAndRoutingFieldsInTrailersAreDropped(): void
    {
        $events = ParserHarness::parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n"
            . "Content-Length: 5\r\nTransfer-Encoding: chunked\r\nHost: evil\r\nX-Ok: 1\r\n\r\n");
        self::assertSame(['end', ['x-ok' => ['1']]], $events[2]);
    }

    public function testBinaryBodyBytesAreNotHeadErrors(): void
    {
        $body = "\0\r\x01\n\x7F\r\n\r\n";
        $events = ParserHarness::parse("PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: " . \strlen($body) . "\r\n\r\n$body");
        self::assertSame(['body', $body], $events[1]);
    }

    public function testPipelinedRequestsComeOutInOrder(): void
    {
        $events = ParserHarness::parse("GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
            . "POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
            . "POST /3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n"
            . "GET /4 HTTP/1.1\r\nHost: a\r\n\r\nGET /5");
        $kinds = array_map(static fn(array $e): string => $e[0] === 'head' ? 'head ' . $e[1]->path : $e[0], $events);
        self::assertSame(['head /1', 'head /2', 'body', 'end', 'head /3', 'body', 'end', 'head /4', 'rest'], $kinds);
        self::assertSame(['rest', 6, false], $events[8]);
    }

    public function testABodyNeverBleedsIntoTheNextRequest(): void
    {
        $smuggled = "GET /admin HTTP/1.1\r\nHost: a\r\n\r\n";
        $events = ParserHarness::parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: " . \strlen($smuggled) . "\r\n\r\n$smuggled"
            . "GET /next HTTP/1.1\r\nHost: a\r\n\r\n");
        self::assertSame(['body', $smuggled], $events[1]);
        self::assertSame(['end', []], $events[2]);
        self::assertSame('/next', $events[3][1]->path);
    }

    /** @return iterable<string, array{string, string, bool}> */
    public static function keepAliveCases(): iterable
    {
        yield '1.1 default' => ['1.1', '', true];
        yield '1.1 close' => ['1.1', "Connection: close\r\n", false];
        yield '1.1 close in a list, any case' => ['1.1', "Connection: Upgrade, CLOSE\r\n", false];
        yield '1.1 keep-alive' => ['1.1', "Connection: keep-alive\r\n", true];
        yield '1.0 default' => ['1.0', '', false];
        yield '1.0 keep-alive' => ['1.0', "Connection: Keep-Alive\r\n", true];
        yield '1.0 keep-alive in a second field' => ['1.0', "Connection: te\r\nConnection: x,keep-alive \r\n", true];
        yield '1.0 keep-alive and close' => ['1.0', "Connection: keep-alive, close\r\n", false];
    }

    #[DataProvider('keepAliveCases')]
    public function testKeepAliveFollowsVersionAndConnection(string $version, string $fields, bool $keepAlive): void
    {
        self::assertSame($keepAlive, ParserHarness::head("GET / HTTP/$version\r\nHost: a\r\n$fields\r\n")->keepAlive);
    }

    /** @return iterable<string, array{string, string, bool}> */
    public static function expectCases(): iterable
    {
        yield '1.1 100-continue' => ['1.1', "Expect: 100-Continue\r\n", true];
        yield '1.1 none' => ['1.1', '', false];
        yield '1.0 100-continue is ignored' => ['1.0', "Expect: 100-continue\r\n", false];
        yield '1.1 other expectation is ignored' => ['1.1', "Expect: something-else\r\n", false];
    }

    #[DataProvider('expectCases')]
    public function testExpectContinueIsHonouredOnlyForHttp11(string $version, string $fields, bool $expect): void
    {
        $head = ParserHarness::head("POST / HTTP/$version\r\nHost: a\r\nContent-Length: 1\r\n$fields\r\nx");
        self::assertSame($expect, $head->expectContinue);
    }

    public function testTheParserIsDeadAfterAnError(): void
    {
        $parser = new RequestParser(new Limits());
        $parser->feed("GET / HTTP/2.0\r\n\r\n");
        try {
            $parser->next();
            self::fail('Expected a ParseException');
        } catch (ParseException $first) {
            self::assertSame(505, $first->status);
        }
        $parser->feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        self::assertFalse($parser->isIdle());
        try {
            $parser->next();
            self::fail('Expected a ParseException');
        } catch (ParseException $again) {
            self::assertSame($first, $again);
        }
    }

    public function testBufferedAndIsIdleTrackPartialRequests(): void
    {
        $parser = new RequestParser(new Limits());
        self::assertTrue($parser->isIdle());
        $parser->feed("\r\n");
        self::assertNull($parser->next());
        self::assertTrue($parser->isIdle());
        $parser->feed('GET / HT');
        self::assertNull($parser->next());
        self::assertSame(8, $parser->buffered());
        self::assertFalse($parser->isIdle());
        $parser->feed("TP/1.1\r\nHost: a\r\n\r\n");
        self::assertInstanceOf(RequestHead::class, $parser->next());
        self::assertSame(0, $parser->buffered());
        self::assertTrue($parser->isIdle());
    }

    public function testTakeBufferHandsOverWhatFollowsAnUpgradeRequest(): void
    {
        $parser = new RequestParser(new Limits());
        $parser->feed("GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x05hello");
        self::assertInstanceOf(RequestHead::class, $parser->next());
        self::assertSame("\x81\x05hello", $parser->takeBuffer());
        self::assertSame(0, $parser->buffered());
        self::assertNull($parser->next());
    }
}
