<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Wire;

use Kiln\Http\Limits;
use Kiln\Http\Wire\ParseException;
use Kiln\Http\Wire\RequestParser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * Inputs that must be rejected, with the status they get. Each is parsed in one feed and one byte at a
 * time; both must reject with the same status, and nothing may come out before the error except what the
 * table allows (earlier complete requests).
 */
final class RejectedRequestsTest extends TestCase
{
    private const GET = "GET / HTTP/1.1\r\nHost: a\r\n";

    private const POST = "POST / HTTP/1.1\r\nHost: a\r\n";

    private const CHUNKED = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";

    /** @return iterable<string, array{0: int, 1: string, 2?: Limits}> */
    public static function rejected(): iterable
    {
        // Request smuggling: framing must be unambiguous.
        yield 'CL and TE together' => [400, self::POST . "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"];
        yield 'TE and CL together' => [400, self::POST . "Transfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n"];
        yield 'TE chunked twice in one field' => [400, self::POST . "Transfer-Encoding: chunked, chunked\r\n\r\n"];
        yield 'TE chunked twice in two fields' => [400, self::POST . "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"];
        yield 'TE not ending in chunked' => [400, self::POST . "Transfer-Encoding: chunked, gzip\r\n\r\n"];
        yield 'TE gzip only' => [400, self::POST . "Transfer-Encoding: gzip\r\n\r\n"];
        yield 'TE identity' => [400, self::POST . "Transfer-Encoding: identity\r\n\r\n"];
        yield 'TE lookalike' => [400, self::POST . "Transfer-Encoding: xchunked\r\n\r\n"];
        yield 'TE with parameter' => [400, self::POST . "Transfer-Encoding: chunked;q=1\r\n\r\n"];
        yield 'TE empty list element' => [400, self::POST . "Transfer-Encoding: , chunked\r\n\r\n"];
        yield 'TE empty' => [400, self::POST . "Transfer-Encoding: \r\n\r\n"];
        yield 'TE with vertical tab' => [400, self::POST . "Transfer-Encoding: \x0Bchunked\r\n\r\n"];
        yield 'TE with space before colon' => [400, self::POST . "Transfer-Encoding : chunked\r\n\r\n"];
        yield 'TE other coding before chunked' => [501, self::POST . "Transfer-Encoding: gzip, chunked\r\n\r\n"];
        yield 'TE on HTTP/1.0' => [400, "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"];
        yield 'CL duplicated, same value' => [400, self::POST . "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello"];
        yield 'CL duplicated, different values' => [400, self::POST . "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello"];
        yield 'CL list' => [400, self::POST . "Content-Length: 5, 5\r\n\r\nhello"];
        yield 'CL plus sign' => [400, self::POST . "Content-Length: +5\r\n\r\nhello"];
        yield 'CL negative' => [400, self::POST . "Content-Length: -5\r\n\r\n"];
        yield 'CL hex' => [400, self::POST . "Content-Length: 0x5\r\n\r\nhello"];
        yield 'CL exponent' => [400, self::POST . "Content-Length: 1e1\r\n\r\n"];
        yield 'CL space inside' => [400, self::POST . "Content-Length: 1 0\r\n\r\n"];
        yield 'CL empty' => [400, self::POST . "Content-Length: \r\n\r\n"];
        yield 'CL over PHP_INT_MAX' => [400, self::POST . "Content-Length: 9223372036854775808\r\n\r\n"];
        yield 'CL 20 digits' => [400, self::POST . "Content-Length: 00000000000000000001\r\n\r\n"];
        yield 'CL PHP_INT_MAX over the body limit' => [413, self::POST . "Content-Length: 9223372036854775807\r\n\r\n"];
        yield 'CL over the body limit' => [413, self::POST . "Content-Length: 11\r\n\r\n", new Limits(bodySize: 10)];

        // Chunk sizes and chunk framing.
        yield 'chunk size 0x' => [400, self::CHUNKED . "0x5\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk size plus' => [400, self::CHUNKED . "+5\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk size minus' => [400, self::CHUNKED . "-5\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk size leading space' => [400, self::CHUNKED . " 5\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk size trailing space' => [400, self::CHUNKED . "5 \r\nhello\r\n0\r\n\r\n"];
        yield 'chunk size empty' => [400, self::CHUNKED . "\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk size not hex' => [400, self::CHUNKED . "5g\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk size 17 digits' => [400, self::CHUNKED . "00000000000000005\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk size overflow' => [400, self::CHUNKED . "8000000000000000\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk size over the body limit' => [413, self::CHUNKED . "7fffffffffffffff\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk size bare LF' => [400, self::CHUNKED . "5\nhello\r\n0\r\n\r\n"];
        yield 'last chunk bare LF' => [400, self::CHUNKED . "0\n\n"];
        yield 'chunk size bare CR' => [400, self::CHUNKED . "5\rhello\r\n0\r\n\r\n"];
        yield 'chunk extension without name' => [400, self::CHUNKED . "5;\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk extension unterminated quote' => [400, self::CHUNKED . "5;a=\"x\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk extension with NUL' => [400, self::CHUNKED . "5;a=\0\r\nhello\r\n0\r\n\r\n"];
        yield 'chunk data too long' => [400, self::CHUNKED . "5\r\nhello!\r\n0\r\n\r\n"];
        yield 'chunk data followed by bare LF' => [400, self::CHUNKED . "5\r\nhello\n0\r\n\r\n"];
        yield 'trailer with obs-fold' => [400, self::CHUNKED . "0\r\nX: a\r\n b\r\n\r\n"];
        yield 'trailer with bare LF' => [400, self::CHUNKED . "0\r\nX: a\n\r\n"];
        yield 'trailer without colon' => [400, self::CHUNKED . "0\r\nnonsense\r\n\r\n"];

        // Line folding, bare CR/LF, NUL and other control characters.
        yield 'obs-fold' => [400, self::GET . "X: a\r\n b\r\n\r\n"];
        yield 'obs-fold with tab' => [400, self::GET . "X: a\r\n\tb\r\n\r\n"];
        yield 'first field starts with space' => [400, "GET / HTTP/1.1\r\n Host: a\r\n\r\n"];
        yield 'bare LF after request line' => [400, "GET / HTTP/1.1\nHost: a\r\n\r\n"];
        yield 'bare LF line endings only' => [400, "GET / HTTP/1.1\nHost: a\n\n"];
        yield 'bare LF after field' => [400, self::GET . "X: a\n\r\n"];
        yield 'leading bare LF' => [400, "\n" . self::GET . "\r\n"];
        yield 'bare CR in request line' => [400, "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'bare CR in field value' => [400, self::GET . "X: a\rb\r\n\r\n"];
        yield 'bare CR in field name' => [400, self::GET . "X\r: a\r\n\r\n"];
        yield 'bare CR line ending' => [400, self::GET . "X: a\r\r\n\r\n"];
        yield 'leading bare CR' => [400, "\r" . self::GET . "\r\n"];
        yield 'NUL in target' => [400, "GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'NUL in method' => [400, "G\0T / HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'NUL in field value' => [400, self::GET . "X: a\0b\r\n\r\n"];
        yield 'NUL in field name' => [400, self::GET . "X\0Y: a\r\n\r\n"];
        yield 'CTL in field value' => [400, self::GET . "X: a\x01b\r\n\r\n"];
        yield 'ESC in field value' => [400, self::GET . "X: \x1B[31m\r\n\r\n"];
        yield 'DEL in field value' => [400, self::GET . "X: a\x7Fb\r\n\r\n"];
        yield 'tab in request line' => [400, "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'tab in field name' => [400, self::GET . "X\t: a\r\n\r\n"];
        yield 'NUL early, line too long later' => [400, "GET /\0" . str_repeat('a', 100) . " HTTP/1.1\r\nHost: a\r\n\r\n", new Limits(requestLine: 64)];

        // Field syntax.
        yield 'field without colon' => [400, self::GET . "X-Nothing\r\n\r\n"];
        yield 'field with empty name' => [400, self::GET . ": value\r\n\r\n"];
        yield 'space before colon' => [400, self::GET . "X : a\r\n\r\n"];
        yield 'field name with separator' => [400, self::GET . "X(y): a\r\n\r\n"];
        yield 'field name with non-ASCII' => [400, self::GET . "X\xC3\xA9: a\r\n\r\n"];

        // Host.
        yield 'Host missing on HTTP/1.1' => [400, "GET / HTTP/1.1\r\n\r\n"];
        yield 'Host missing with absolute-form' => [400, "GET http://a/ HTTP/1.1\r\n\r\n"];
        yield 'Host twice' => [400, self::GET . "Host: a\r\n\r\n"];
        yield 'Host twice on HTTP/1.0' => [400, "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n"];
        yield 'Host empty' => [400, "GET / HTTP/1.1\r\nHost: \r\n\r\n"];
        yield 'Host with userinfo' => [400, "GET / HTTP/1.1\r\nHost: user@a\r\n\r\n"];
        yield 'Host with path' => [400, "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n"];
        yield 'Host with space' => [400, "GET / HTTP/1.1\r\nHost: a b\r\n\r\n"];
        yield 'Host list' => [400, "GET / HTTP/1.1\r\nHost: a, b\r\n\r\n"];
        yield 'Host port not numeric' => [400, "GET / HTTP/1.1\r\nHost: a:http\r\n\r\n"];
        yield 'Host port too long' => [400, "GET / HTTP/1.1\r\nHost: a:123456\r\n\r\n"];
        yield 'Host two ports' => [400, "GET / HTTP/1.1\r\nHost: a:1:2\r\n\r\n"];
        yield 'Host unclosed IPv6' => [400, "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n"];
        yield 'Host invalid IPv6' => [400, "GET / HTTP/1.1\r\nHost: [zz::1]\r\n\r\n"];
        yield 'Host with percent' => [400, "GET / HTTP/1.1\r\nHost: a%2fb\r\n\r\n"];
        yield 'Host with backslash' => [400, "GET / HTTP/1.1\r\nHost: a\\b\r\n\r\n"];

        // Request line, target and version.
        yield 'HTTP/2.0' => [505, "GET / HTTP/2.0\r\nHost: a\r\n\r\n"];
        yield 'HTTP/1.2' => [505, "GET / HTTP/1.2\r\nHost: a\r\n\r\n"];
        yield 'HTTP/0.9 style version' => [505, "GET / HTTP/0.9\r\n\r\n"];
        yield 'HTTP/3.0' => [505, "GET / HTTP/3.0\r\nHost: a\r\n\r\n"];
        yield 'version without minor' => [400, "GET / HTTP/1\r\nHost: a\r\n\r\n"];
        yield 'version two-digit major' => [400, "GET / HTTP/11.1\r\nHost: a\r\n\r\n"];
        yield 'version lower case' => [400, "GET / http/1.1\r\nHost: a\r\n\r\n"];
        yield 'version missing' => [400, "GET /\r\nHost: a\r\n\r\n"];
        yield 'version garbage' => [400, "GET / FOO/1.1\r\nHost: a\r\n\r\n"];
        yield 'trailing space after version' => [400, "GET / HTTP/1.1 \r\nHost: a\r\n\r\n"];
        yield 'two spaces after method' => [400, "GET  / HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'two spaces before version' => [400, "GET /  HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'leading space' => [400, " GET / HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'space in target' => [400, "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'method not a token' => [400, "GE(T / HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'empty request line' => [400, "\r\n\r\n\r\n\r\n\r\n\r\n"];
        yield 'asterisk with GET' => [400, "GET * HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'authority-form with GET' => [400, "GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'CONNECT' => [501, "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n"];
        yield 'relative target' => [400, "GET a/b HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'fragment in target' => [400, "GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'non-ASCII in target' => [400, "GET /caf\xC3\xA9 HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'absolute-form with other scheme' => [400, "GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'absolute-form with userinfo' => [400, "GET http://u:p@a/ HTTP/1.1\r\nHost: a\r\n\r\n"];
        yield 'absolute-form with empty host' => [400, "GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n"];

        // Oversize.
        yield 'request line over the limit' => [414, 'GET /' . str_repeat('a', 60) . " HTTP/1.1\r\nHost: a\r\n\r\n", new Limits(requestLine: 64)];
        yield 'request line over the limit, unfinished' => [414, 'GET /' . str_repeat('a', 200), new Limits(requestLine: 64)];
        yield 'head over the limit' => [431, self::GET . 'X: ' . str_repeat('a', 100) . "\r\n\r\n", new Limits(headerBytes: 100)];
        yield 'head over the limit, unfinished' => [431, self::GET . 'X: ' . str_repeat('a', 200), new Limits(headerBytes: 100)];
        yield 'field line over the limit' => [431, self::GET . 'X: ' . str_repeat('a', 100) . "\r\n\r\n", new Limits(headerLine: 100)];
        yield 'too many fields' => [431, self::GET . str_repeat("X: a\r\n", 5) . "\r\n", new Limits(headerCount: 5)];
        yield 'second pipelined request bad' => [400, self::GET . "\r\nGET / HTTP/1.1\r\n\r\n"];
    }

    #[DataProvider('rejected')]
    public function testRequestIsRejected(int $status, string $input, ?Limits $limits = null): void
    {
        $events = ParserHarness::parse($input, $limits);
        $last = $events[array_key_last($events)];
        self::assertSame(['error', $status], [$last[0], $last[1] ?? null], 'Got ' . json_encode($last, \JSON_INVALID_UTF8_SUBSTITUTE));
    }

    #[DataProvider('rejected')]
    public function testRejectionIsFinal(int $status, string $input, ?Limits $limits = null): void
    {
        $parser = new RequestParser($limits ?? new Limits());
        $parser->feed($input);
        $error = null;
        try {
            while ($parser->next() !== null) {
                // drain what comes before the error
            }
        } catch (ParseException $error) {
        }
        self::assertInstanceOf(ParseException::class, $error);
        self::assertSame($status, $error->status);
        $parser->feed(self::GET . "\r\n");
        $this->expectExceptionObject($error);
        $parser->next();
    }
}
