<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Wire;

use Kiln\Http\Response;
use Kiln\Http\Wire\ResponseEncoder;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class ResponseEncoderTest extends TestCase
{
    private const DATE = 'Date: Thu, 01 Jan 2026 00:00:00 GMT';

    private int $now = 1767225600; // 2026-01-01T00:00:00Z

    private function encoder(): ResponseEncoder
    {
        return new ResponseEncoder(fn(): int => $this->now);
    }

    /** @param array<string, string|list<string>> $headers */
    private function head(int $status, array $headers, ?int $length, string $version = '1.1', bool $keepAlive = true, bool $headRequest = false): string
    {
        return $this->encoder()->head($status, $headers, $length, $version, $keepAlive, $headRequest);
    }

    public function testKnownLengthGivesContentLength(): void
    {
        self::assertSame(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" . self::DATE . "\r\nServer: kiln\r\nContent-Length: 5\r\n\r\n",
            $this->head(200, ['Content-Type' => 'text/plain'], 5),
        );
    }

    public function testZeroLengthIsStillFramed(): void
    {
        self::assertStringContainsString("\r\nContent-Length: 0\r\n", $this->head(200, [], 0));
    }

    public function testUnknownLengthOnHttp11IsChunked(): void
    {
        $head = $this->head(200, [], null);
        self::assertStringContainsString("\r\nTransfer-Encoding: chunked\r\n", $head);
        self::assertStringNotContainsString('Content-Length', $head);
        self::assertStringNotContainsString('Connection', $head);
    }

    public function testUnknownLengthOnHttp10IsCloseDelimited(): void
    {
        $head = $this->head(200, [], null, '1.0', true);
        self::assertStringNotContainsString('Transfer-Encoding', $head);
        self::assertStringNotContainsString('Content-Length', $head);
        self::assertStringEndsWith("\r\nConnection: close\r\n\r\n", $head);
    }

    public function testHeadResponseKeepsContentLength(): void
    {
        self::assertStringContainsString("\r\nContent-Length: 1234\r\n", $this->head(200, [], 1234, '1.1', true, true));
    }

    public function testHeadResponseWithUnknownLengthHasNoFramingAndStaysOpen(): void
    {
        foreach (['1.1' => '', '1.0' => "Connection: keep-alive\r\n"] as $version => $connection) {
            $head = $this->head(200, [], null, $version, true, true);
            self::assertStringNotContainsString('Transfer-Encoding', $head);
            self::assertStringNotContainsString('Content-Length', $head);
            self::assertStringEndsWith("Server: kiln\r\n$connection\r\n", $head);
        }
    }

    /** @return iterable<string, array{int}> */
    public static function bodylessStatuses(): iterable
    {
        foreach ([100, 102, 103, 204, 304] as $status) {
            yield (string) $status => [$status];
        }
    }

    #[DataProvider('bodylessStatuses')]
    public function testBodylessStatusesNeverCarryFraming(int $status): void
    {
        foreach ([0, 42, null] as $length) {
            $head = $this->head($status, ['Content-Length' => '42', 'Transfer-Encoding' => 'chunked'], $length);
            self::assertStringNotContainsStringIgnoringCase('content-length', $head);
            self::assertStringNotContainsStringIgnoringCase('transfer-encoding', $head);
        }
        self::assertFalse(ResponseEncoder::hasBody($status, false));
    }

    public function testNotModifiedOnHttp10KeepsTheConnectionOpen(): void
    {
        self::assertStringEndsWith("Connection: keep-alive\r\n\r\n", $this->head(304, [], null, '1.0', true));
    }

    /** @return iterable<string, array{string, bool, string}> */
    public static function connectionCases(): iterable
    {
        yield '1.1 keep-alive' => ['1.1', true, ''];
        yield '1.1 close' => ['1.1', false, "Connection: close\r\n"];
        yield '1.0 keep-alive' => ['1.0', true, "Connection: keep-alive\r\n"];
        yield '1.0 close' => ['1.0', false, "Connection: close\r\n"];
    }

    #[DataProvider('connectionCases')]
    public function testConnectionHeaderFollowsVersionAndKeepAlive(string $version, bool $keepAlive, string $expected): void
    {
        $head = $this->head(200, [], 2, $version, $keepAlive);
        self::assertStringStartsWith('HTTP/1.1 200 OK', $head);
        self::assertStringEndsWith("Content-Length: 2\r\n$expected\r\n", $head);
    }

    public function testApplicationFramingAndConnectionHeadersAreReplaced(): void
    {
        $head = $this->head(200, ['content-length' => '999', 'TRANSFER-ENCODING' => 'gzip', 'Connection' => 'keep-alive'], 3, '1.1', false);
        self::assertSame(
            "HTTP/1.1 200 OK\r\n" . self::DATE . "\r\nServer: kiln\r\nContent-Length: 3\r\nConnection: close\r\n\r\n",
            $head,
        );
    }

    public function testSwitchingProtocolsKeepsTheUpgradeConnectionHeader(): void
    {
        self::assertSame(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" . self::DATE . "\r\nServer: kiln\r\n\r\n",
            $this->head(101, ['Upgrade' => 'websocket', 'Connection' => 'Upgrade'], null),
        );
    }

    public function testDateIsCachedWithinASecondAndRegeneratedAfter(): void
    {
        $encoder = $this->encoder();
        $first = $encoder->head(200, [], 0, '1.1', true);
        $this->now += 0; // same second
        self::assertSame($first, $encoder->head(200, [], 0, '1.1', true));
        $this->now += 1;
        self::assertStringContainsString("\r\nDate: Thu, 01 Jan 2026 00:00:01 GMT\r\n", $encoder->head(200, [], 0, '1.1', true));
    }

    public function testDefaultClockGivesAnImfFixdate(): void
    {
        $head = (new ResponseEncoder())->head(200, [], 0, '1.1', true);
        self::assertMatchesRegularExpression('/\r\nDate: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT\r\n/', $head);
    }

    public function testGivenDateAndServerAreKept(): void
    {
        $head = $this->head(200, ['date' => 'Mon, 01 Jan 2024 00:00:00 GMT', 'SERVER' => 'mine'], 0);
        self::assertSame("HTTP/1.1 200 OK\r\ndate: Mon, 01 Jan 2024 00:00:00 GMT\r\nSERVER: mine\r\nContent-Length: 0\r\n\r\n", $head);
    }

    public function testListValuesBecomeRepeatedFieldLines(): void
    {
        $head = $this->head(200, ['Set-Cookie' => ['a=1', 'b=2'], 'X-None' => []], 0);
        self::assertStringContainsString("\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n", $head);
        self::assertStringNotContainsString('X-None', $head);
    }

    public function testCustomAndUnknownReasonPhrases(): void
    {
        self::assertStringStartsWith("HTTP/1.1 200 Fine\r\n", $this->encoder()->head(200, [], 0, '1.1', true, false, 'Fine'));
        self::assertStringStartsWith("HTTP/1.1 299 Success\r\n", $this->head(299, [], 0));
        self::assertSame('Not Found', ResponseEncoder::reason(404));
        self::assertSame('Content Too Large', ResponseEncoder::reason(413));
        self::assertSame('Server Error', ResponseEncoder::reason(599));
    }

    /** @return iterable<string, array{array<string, string|list<string>>}> */
    public static function injections(): iterable
    {
        yield 'CRLF in value' => [['X-A' => "a\r\nSet-Cookie: evil=1"]];
        yield 'LF in value' => [['X-A' => "a\nb"]];
        yield 'CR in value' => [['X-A' => "a\rb"]];
        yield 'NUL in value' => [['X-A' => "a\0b"]];
        yield 'CRLF in a list value' => [['Set-Cookie' => ['ok=1', "b=2\r\n\r\n<html>"]]];
        yield 'CRLF in name' => [["X-A\r\nX-B" => 'v']];
        yield 'space in name' => [['X A' => 'v']];
        yield 'colon in name' => [['X-A:' => 'v']];
        yield 'empty name' => [['' => 'v']];
        yield 'non-ASCII name' => [["X-\xC3\xA9" => 'v']];
    }

    /** @param array<string, string|list<string>> $headers */
    #[DataProvider('injections')]
    public function testHeaderInjectionIsRefused(array $headers): void
    {
        $this->expectException(\ValueError::class);
        $this->head(200, $headers, 0);
    }

    /** @param array<string, string|list<string>> $trailers */
    #[DataProvider('injections')]
    public function testTrailerInjectionIsRefused(array $trailers): void
    {
        $this->expectException(\ValueError::class);
        $this->encoder()->end($trailers);
    }

    /**
     * responseHead() trusts a Response's headers: that is only safe because no way into a Response lets an
     * injection through, so CR, LF and NUL still never reach the wire.
     *
     * @param array<string, string|list<string>> $headers
     */
    #[DataProvider('injections')]
    public function testAResponseCannotCarryAnInjectionToResponseHead(array $headers): void
    {
        $name = (string) array_key_first($headers);
        $value = $headers[$name];
        $refused = 0;
        $ways = [
            static fn() => new Response(200, $headers),
            static fn() => (new Response())->setHeader($name, $value),
            static fn() => (new Response())->addHeader($name, \is_array($value) ? $value[1] : $value),
        ];
        foreach ($ways as $way) {
            try {
                $way();
            } catch (\ValueError) {
                $refused++;
            }
        }
        self::assertSame(\count($ways), $refused);
    }

    public function testResponseHeadEncodesAResponseAsHeadEncodesItsHeaders(): void
    {
        $response = new Response(201, ['Content-Type' => 'text/plain', 'Set-Cookie' => ['a=1', 'b=2'], 'Content-Length' => '9']);
        $encoder = $this->encoder();
        foreach ([[5, '1.1', true, false], [null, '1.1', false, false], [null, '1.0', true, true]] as [$length, $version, $keepAlive, $headRequest]) {
            self::assertSame(
                $encoder->head(201, $response->headers(), $length, $version, $keepAlive, $headRequest),
                $encoder->responseHead($response, $length, $version, $keepAlive, $headRequest),
            );
        }
        $response->setStatus(999);
        $this->expectException(\ValueError::class);
        $encoder->responseHead($response, 0, '1.1', true);
    }

    public function testReasonInjectionIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        $this->encoder()->head(200, [], 0, '1.1', true, false, "OK\r\nX: y");
    }

    public function testInvalidStatusVersionAndLengthAreRefused(): void
    {
        foreach ([[99, '1.1', 0], [600, '1.1', 0], [200, '2.0', 0], [200, 'HTTP/1.1', 0], [200, '1.1', -1]] as [$status, $version, $length]) {
            try {
                $this->encoder()->head($status, [], $length, $version, true);
                self::fail("Accepted $status $version $length");
            } catch (\ValueError) {
                $this->addToAssertionCount(1);
            }
        }
    }

    public function testNumericHeaderNamesAreEmittedAsWritten(): void
    {
        self::assertStringContainsString("\r\n123: v\r\n", $this->head(200, ['123' => 'v'], 0));
    }

    public function testChunksFrameTheirData(): void
    {
        $encoder = $this->encoder();
        self::assertSame("5\r\nhello\r\n", $encoder->chunk('hello'));
        self::assertSame("1a\r\n" . str_repeat('x', 26) . "\r\n", $encoder->chunk(str_repeat('x', 26)));
    }

    public function testAnEmptyChunkIsNotTheTerminator(): void
    {
        self::assertSame('', $this->encoder()->chunk(''));
    }

    public function testEndTerminatesWithOptionalTrailers(): void
    {
        $encoder = $this->encoder();
        self::assertSame("0\r\n\r\n", $encoder->end());
        self::assertSame("0\r\nX-Sum: abc\r\nX-T: 1\r\nX-T: 2\r\n\r\n", $encoder->end(['X-Sum' => 'abc', 'X-T' => ['1', '2']]));
    }

    public function testContinue(): void
    {
        self::assertSame("HTTP/1.1 100 Continue\r\n\r\n", $this->encoder()->continue());
    }

    public function testHasBody(): void
    {
        self::assertTrue(ResponseEncoder::hasBody(200, false));
        self::assertTrue(ResponseEncoder::hasBody(404, false));
        self::assertFalse(ResponseEncoder::hasBody(200, true));
        self::assertFalse(ResponseEncoder::hasBody(101, false));
        self::assertFalse(ResponseEncoder::hasBody(204, false));
        self::assertFalse(ResponseEncoder::hasBody(304, false));
    }

    public function testAnUndatedResponseIsWholeClosesTheConnectionAndHasNoDate(): void
    {
        $bytes = $this->encoder()->undated(new Response(502, ['Content-Type' => 'text/plain'], "down\n"));
        self::assertSame("HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nServer: kiln\r\nContent-Length: 5\r\nConnection: close\r\n\r\ndown\n", $bytes);
    }

    public function testAnUndatedResponseIsDatedAsItIsSentWithTheCurrentSecond(): void
    {
        $now = 1_700_000_000;
        $encoder = new ResponseEncoder(static function () use (&$now): int {
            return $now;
        });
        $bytes = $encoder->undated(new Response(503, ['Retry-After' => '1'], "busy\n"));
        self::assertSame(
            "HTTP/1.1 503 Service Unavailable\r\nDate: Tue, 14 Nov 2023 22:13:20 GMT\r\nRetry-After: 1\r\nServer: kiln\r\n"
            . "Content-Length: 5\r\nConnection: close\r\n\r\nbusy\n",
            $encoder->dated($bytes),
        );
        $now += 61;
        self::assertStringContainsString("\r\nDate: Tue, 14 Nov 2023 22:14:21 GMT\r\n", $encoder->dated($bytes), 'the Date of the moment it is sent');
    }

    public function testAnUndatedResponseNeedsAStringBody(): void
    {
        $this->expectException(\ValueError::class);
        $this->encoder()->undated(new Response(502, [], ['streamed']));
    }

    public function testAResponseLikeTheLastOneIsEncodedExactlyAsAFreshEncoderWouldEncodeIt(): void
    {
        $clock = static fn(): int => 1_700_000_000;
        $shared = new ResponseEncoder($clock);
        $responses = [
            new Response(200, ['Content-Type' => 'text/plain'], 'a'),
            new Response(200, ['Content-Type' => 'text/plain'], 'bb'),
            new Response(200, ['Content-Type' => 'text/html'], 'bb'),
            new Response(404, ['Content-Type' => 'text/html'], ''),
            new Response(404, ['Content-Type' => 'text/html', 'Date' => 'Tue, 14 Nov 2023 22:13:20 GMT'], ''),
            new Response(404, ['Content-Type' => 'text/html', 'Server' => 'mine'], ''),
            new Response(101, ['Connection' => 'Upgrade', 'Upgrade' => 'websocket'], ''),
            new Response(200, ['Connection' => 'Upgrade', 'Upgrade' => 'websocket'], ''),
        ];
        foreach ($responses as $response) {
            foreach ([['1.1', true, false], ['1.0', true, false], ['1.1', false, true], ['1.1', true, false]] as [$version, $keepAlive, $headRequest]) {
                $body = $response->body();
                \assert(\is_string($body));
                $expected = (new ResponseEncoder($clock))->responseHead($response, \strlen($body), $version, $keepAlive, $headRequest);
                self::assertSame($expected, $shared->responseHead($response, \strlen($body), $version, $keepAlive, $headRequest));
                self::assertSame((new ResponseEncoder($clock))->undated($response), $shared->undated($response));
            }
        }
    }

    public function testAnInvalidVersionIsRefusedAlsoForHeadersEncodedJustBefore(): void
    {
        $encoder = $this->encoder();
        $response = new Response(200, ['Content-Type' => 'text/plain'], 'a');
        $encoder->responseHead($response, 1, '1.1', true);
        $this->expectException(\ValueError::class);
        $encoder->responseHead($response, 1, '2.0', true);
    }
}
