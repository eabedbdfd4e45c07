<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\Cgi;

use Kiln\Isolation\Cgi\CgiHead;
use Kiln\Isolation\Cgi\CgiHeadCache;
use Kiln\Isolation\Cgi\CgiRedirect;
use Kiln\Isolation\Cgi\CgiResponseException;
use Kiln\Isolation\Cgi\CgiResponseParser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class CgiResponseParserTest extends TestCase
{
    /**
     * Parses $input whole and byte by byte, asserts both agree, and returns [head, body].
     *
     * @return array{CgiHead, string}
     */
    private static function parse(string $input, int $max = CgiResponseParser::DEFAULT_MAX_HEADER_BYTES): array
    {
        $whole = self::feedAll([$input], $max);
        $bytes = self::feedAll(\str_split($input), $max);
        self::assertEquals($whole, $bytes, 'Feeding byte by byte must give the same result as one feed');
        self::assertInstanceOf(CgiHead::class, $whole[0], 'Expected a head, got ' . \json_encode($whole));

        return [$whole[0], $whole[1]];
    }

    /**
     * @param list<string> $feeds
     *
     * @return array{CgiHead|string, string}
     */
    private static function feedAll(array $feeds, int $max): array
    {
        $parser = new CgiResponseParser($max);
        $heads = 0;
        $body = '';
        try {
            foreach ($feeds as $bytes) {
                if ($parser->feed($bytes) !== null) {
                    ++$heads;
                }
                $body .= $parser->body();
            }
            $head = $parser->end();
        } catch (CgiResponseException $e) {
            return ['error: ' . $e->getMessage(), ''];
        }
        self::assertSame(1, $heads, 'feed() returns the head exactly once');
        self::assertSame($head, $parser->head());

        return [$head, $body];
    }

    public function testADocumentResponseDefaultsTo200AndKeepsItsBody(): void
    {
        [$head, $body] = self::parse("Content-Type: text/html\r\n\r\n<p>hi</p>\r\n\r\nmore");
        self::assertSame(200, $head->status);
        self::assertFalse($head->hasStatus);
        self::assertSame([['Content-Type', 'text/html']], $head->headers);
        self::assertSame(CgiRedirect::None, $head->redirect);
        self::assertSame("<p>hi</p>\r\n\r\nmore", $body);
    }

    public function testBareLineFeedsEndLinesAsCgiScriptsOftenWriteThem(): void
    {
        [$head, $body] = self::parse("Content-type: text/plain\nX-A: 1\n\nline1\nline2\n");
        self::assertSame([['Content-type', 'text/plain'], ['X-A', '1']], $head->headers);
        self::assertSame("line1\nline2\n", $body);
    }

    public function testMixedLineEndingsAreAccepted(): void
    {
        [$head, $body] = self::parse("A: 1\r\nB: 2\n\r\nbody");
        self::assertSame([['A', '1'], ['B', '2']], $head->headers);
        self::assertSame('body', $body);
        [$head, $body] = self::parse("A: 1\n\r\n");
        self::assertSame([['A', '1']], $head->headers);
        self::assertSame('', $body);
    }

    public function testStatusFieldSetsStatusAndReasonAndIsNotForwarded(): void
    {
        [$head] = self::parse("Status: 404 Not Found\r\nContent-Type: text/html\r\n\r\n");
        self::assertSame(404, $head->status);
        self::assertSame('Not Found', $head->reason);
        self::assertTrue($head->hasStatus);
        self::assertSame([['Content-Type', 'text/html']], $head->headers);
        self::assertNull($head->header('status'));
    }

    public function testStatusWithoutReasonAndInAnyCaseIsAccepted(): void
    {
        [$head] = self::parse("sTaTuS:503\nRetry-After: 5\n\n");
        self::assertSame(503, $head->status);
        self::assertSame('', $head->reason);
    }

    public function testMultipleSetCookieFieldsAreKeptInOrder(): void
    {
        [$head] = self::parse("Set-Cookie: a=1\r\nContent-Type: text/plain\r\nset-cookie: b=2; Path=/\r\nSet-Cookie: c=3\r\n\r\n");
        self::assertSame(['a=1', 'b=2; Path=/', 'c=3'], $head->headerValues('SET-COOKIE'));
        self::assertSame('a=1', $head->header('Set-Cookie'));
        self::assertSame('set-cookie', $head->headers[2][0]);
    }

    public function testValueWhitespaceIsTrimmedAndInnerWhitespaceKept(): void
    {
        [$head] = self::parse("X-Pad: \t a  b \t\r\nX-Empty:\r\n\r\n");
        self::assertSame([['X-Pad', 'a  b'], ['X-Empty', '']], $head->headers);
    }

    public function testAnAbsoluteLocationWithoutStatusIsAClientRedirectWith302(): void
    {
        [$head, $body] = self::parse("Location: https://example.com/x?y=1\r\n\r\n");
        self::assertSame(302, $head->status);
        self::assertSame(CgiRedirect::Client, $head->redirect);
        self::assertSame('https://example.com/x?y=1', $head->location);
        self::assertSame([['Location', 'https://example.com/x?y=1']], $head->headers);
        self::assertSame('', $body);
    }

    public function testALocalPathWithoutStatusIsALocalRedirect(): void
    {
        [$head] = self::parse("Location: /other.cgi?a=b\n\n");
        self::assertSame(CgiRedirect::Local, $head->redirect);
        self::assertSame('/other.cgi?a=b', $head->location);
    }

    public function testALocalPathWithAStatusIsSentToTheClient(): void
    {
        // What PHP writes for header('Location: /login'): it adds the Status itself.
        [$head, $body] = self::parse("Status: 302 Found\r\nLocation: /login\r\nContent-type: text/html\r\n\r\nmoved");
        self::assertSame(302, $head->status);
        self::assertSame(CgiRedirect::Client, $head->redirect);
        self::assertSame('moved', $body);
        [$head] = self::parse("Status: 301\r\nLocation: https://a.example/\r\n\r\n");
        self::assertSame(301, $head->status);
        self::assertSame(CgiRedirect::Client, $head->redirect);
    }

    public function testANetworkPathLocationIsNotLocal(): void
    {
        [$head] = self::parse("Location: //evil.example/x\n\n");
        self::assertSame(CgiRedirect::Client, $head->redirect);
        self::assertSame(302, $head->status);
    }

    public function testBodyBytesPassThroughUnchangedAfterTheHead(): void
    {
        $body = "\x00\xff\r\n\n\nStatus: 500\n\n" . \str_repeat('x', 3000);
        [, $got] = self::parse("Content-Type: application/octet-stream\n\n" . $body);
        self::assertSame($body, $got);
    }

    public function testAHeaderBlockOfExactlyTheLimitIsAccepted(): void
    {
        $input = 'X: ' . \str_repeat('a', 93) . "\r\n\r\n"; // 100 bytes
        [$head, $body] = self::parse($input . 'body', 100);
        self::assertSame(\str_repeat('a', 93), $head->header('x'));
        self::assertSame('body', $body);
    }

    public function testForwardedHeadersDropHopByHopFieldsAndKeepTheScriptsContentLength(): void
    {
        [$head] = self::parse("Content-Type: a/b\nConnection: close\nTransfer-Encoding: chunked\nContent-Length: 4\nX-Keep: 1\nKeep-Alive: 5\nUpgrade: h2c\n\n");
        self::assertSame([['Content-Type', 'a/b'], ['Content-Length', '4'], ['X-Keep', '1']], $head->forwardedHeaders(), 'the server frames a streamed body by it');
    }

    public function testNonAsciiValueBytesAreKept(): void
    {
        [$head] = self::parse("X-Name: caf\xc3\xa9 \xff\n\n");
        self::assertSame("caf\xc3\xa9 \xff", $head->header('X-Name'));
    }

    public function testBodyIsEmptyUntilTheHeadIsComplete(): void
    {
        $parser = new CgiResponseParser();
        self::assertNull($parser->feed("Content-Type: text/plain\r\n"));
        self::assertSame('', $parser->body());
        self::assertNotNull($parser->feed("\r\nab"));
        self::assertNull($parser->feed('cd'));
        self::assertSame('abcd', $parser->body());
        self::assertSame('', $parser->body());
    }

    public function testAnIdenticalHeaderBlockIsParsedOnceAndARefusedOneIsRefusedEveryTime(): void
    {
        $cache = new CgiHeadCache(2);
        $first = (new CgiResponseParser(cache: $cache))->feed("Content-type: text/html\r\nX-A: 1\r\n\r\none");
        $parser = new CgiResponseParser(cache: $cache);
        $again = $parser->feed("Content-type: text/html\r\nX-A: 1\r\n\r\ntwo");
        self::assertNotNull($first);
        self::assertSame($first, $again);
        self::assertSame('two', $parser->body());
        $split = new CgiResponseParser(cache: $cache);
        $heads = \array_map($split->feed(...), \str_split("Content-type: text/html\r\nX-A: 1\r\n\r\nthree"));
        self::assertSame($first, \array_values(\array_filter($heads))[0] ?? null, 'byte by byte, the block is found in the cache too');
        self::assertSame('three', $split->body());
        $lf = (new CgiResponseParser(cache: $cache))->feed("Content-type: text/html\nX-A: 1\n\n");
        self::assertNotSame($first, $lf, 'LF lines are another block');
        $early = new CgiResponseParser(cache: $cache);
        self::assertNotSame($first, $early->feed("Content-type: text/html\n\nX-A: 1\r\n\r\n"), 'the block ends at the first empty line');
        self::assertSame("X-A: 1\r\n\r\n", $early->body());
        self::assertSame([['Content-Type', 'text/html'], ['X-A', '1']], $again->forwardedHeaders(), 'spelled as Apache and nginx send it');
        for ($i = 0; $i < 2; $i++) {
            try {
                (new CgiResponseParser(cache: $cache))->feed("X-Bad\x01: 1\r\n\r\n");
                self::fail('expected a CgiResponseException');
            } catch (CgiResponseException $e) {
                self::assertStringContainsString('header name', $e->getMessage());
            }
        }
        (new CgiResponseParser(cache: $cache))->feed("Status: 201\n\n");
        (new CgiResponseParser(cache: $cache))->feed("Status: 202\n\n");
        $evicted = (new CgiResponseParser(cache: $cache))->feed("Content-type: text/html\r\nX-A: 1\r\n\r\n");
        self::assertNotSame($first, $evicted, 'the oldest of two entries went');
        self::assertNotNull($evicted);
        self::assertSame($first->forwardedHeaders(), $evicted->forwardedHeaders());
    }

    public function testAfterAnErrorTheParserKeepsRefusing(): void
    {
        $parser = new CgiResponseParser();
        try {
            $parser->feed("bad line\n\n");
            self::fail('expected a CgiResponseException');
        } catch (CgiResponseException) {
        }
        $this->expectException(CgiResponseException::class);
        $parser->feed("Content-Type: text/plain\n\n");
    }

    /** @return iterable<string, array{string, string, 2?: int}> */
    public static function rejected(): iterable
    {
        yield 'nothing at all' => ['', 'wrote nothing'];
        yield 'no empty line before EOF' => ["Content-Type: text/html\r\n", 'ended inside'];
        yield 'garbage without a newline' => ['hello world', 'ended inside'];
        yield 'an empty header block' => ["\r\nbody", 'no header fields'];
        yield 'an empty header block with LF' => ["\nbody", 'no header fields'];
        yield 'a line without a colon' => ["Content-Type: text/html\nhello\n\n", 'Malformed CGI header line'];
        yield 'plain text output' => ["Hello, world!\n\nmore", 'Malformed CGI header line'];
        yield 'an HTTP status line (NPH)' => ["HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", 'Malformed CGI header'];
        yield 'space before the colon' => ["Content-Type : text/html\n\n", 'Malformed CGI header name'];
        yield 'an empty name' => [": value\n\n", 'Malformed CGI header name'];
        yield 'a non-token name' => ["X(a): 1\n\n", 'Malformed CGI header name'];
        yield 'obs-fold with a space' => ["X-A: 1\n continued\n\n", 'obs-fold'];
        yield 'obs-fold with a tab' => ["X-A: 1\r\n\tcontinued\r\n\r\n", 'obs-fold'];
        yield 'a folded first line' => [" X-A: 1\n\n", 'obs-fold'];
        yield 'a bare CR inside a value' => ["X-A: 1\r2\n\n", 'Control character'];
        yield 'a CR before CRLF' => ["X-A: 1\r\r\n\r\n", 'Control character'];
        yield 'a NUL in a value' => ["X-A: a\x00b\n\n", 'Control character'];
        yield 'a DEL in a value' => ["X-A: a\x7fb\n\n", 'Control character'];
        yield 'a non-numeric Status' => ["Status: OK\n\n", 'Malformed CGI Status'];
        yield 'a four-digit Status' => ["Status: 2000\n\n", 'Malformed CGI Status'];
        yield 'a Status glued to its reason' => ["Status: 200OK\n\n", 'Malformed CGI Status'];
        yield 'an informational Status' => ["Status: 101 Switching Protocols\n\n", 'Malformed CGI Status'];
        yield 'a Status above 599' => ["Status: 600 Nope\n\n", 'Malformed CGI Status'];
        yield 'an empty Status' => ["Status:\n\n", 'Malformed CGI Status'];
        yield 'two Status fields' => ["Status: 200\nStatus: 404\n\n", 'more than one Status'];
        yield 'two Location fields' => ["Location: /a\nLocation: /b\n\n", 'more than one Location'];
        yield 'an empty Location' => ["Location: \n\n", 'empty Location'];
        yield 'a header block over the limit' => ['X: ' . \str_repeat('a', 200) . "\n\n", 'exceeds 100 bytes', 100];
        yield 'an endless header line' => [\str_repeat('a', 101), 'exceeds 100 bytes', 100];
        yield 'a block one byte over the limit' => ['X: ' . \str_repeat('a', 94) . "\r\n\r\n", 'exceeds 100 bytes', 100];
    }

    #[DataProvider('rejected')]
    public function testMalformedResponsesAreRefused(string $input, string $message, int $max = CgiResponseParser::DEFAULT_MAX_HEADER_BYTES): void
    {
        $whole = self::feedAll([$input], $max);
        $bytes = self::feedAll($input === '' ? [] : \str_split($input), $max);
        self::assertSame($whole, $bytes, 'Feeding byte by byte must give the same verdict as one feed');
        self::assertIsString($whole[0]);
        self::assertStringContainsString($message, $whole[0]);
    }

    public function testALimitBelowTwoIsAProgrammingError(): void
    {
        $this->expectException(\ValueError::class);
        new CgiResponseParser(1);
    }
}
