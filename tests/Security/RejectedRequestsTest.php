<?php

declare(strict_types=1);

namespace Kiln\Tests\Security;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * One regression per attack class on the request framing: the server answers the refused request with
 * its status, closes, and never answers a request pipelined after it (a smuggled one, say).
 */
final class RejectedRequestsTest extends TestCase
{
    private static ?KilnProcess $server = null;

    private const FOLLOW = "GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n";

    public static function setUpBeforeClass(): void
    {
        self::$server = KilnProcess::start(\dirname(__DIR__) . '/Fixtures/http/app.php', ['--workers=1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    /** @return iterable<string, array{string}> */
    public static function smuggling(): iterable
    {
        yield 'CL and TE together' => ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"];
        yield 'TE and CL together' => ["POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n"];
        yield 'duplicate CL' => ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"];
        yield 'conflicting CL' => ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 40\r\n\r\nabc"];
        yield 'CL list' => ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc"];
        yield 'signed CL' => ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc"];
        yield 'negative CL' => ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -3\r\n\r\nabc"];
        yield 'hex CL' => ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0x3\r\n\r\nabc"];
        yield 'CL with inner space' => ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1 2\r\n\r\nabc"];
        yield 'CL overflow' => ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\nabc"];
        yield 'TE not ending in chunked' => ["POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n"];
        yield 'TE identity' => ["POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\nabc"];
        yield 'TE with junk' => ["POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"];
        yield 'TE space before colon' => ["POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"];
        yield 'TE on HTTP/1.0' => ["POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"];
    }

    /** @return iterable<string, array{string}> */
    public static function badChunks(): iterable
    {
        $head = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
        yield 'non-hex size' => [$head . "zz\r\nabc\r\n0\r\n\r\n"];
        yield '0x prefix' => [$head . "0x3\r\nabc\r\n0\r\n\r\n"];
        yield 'plus sign' => [$head . "+3\r\nabc\r\n0\r\n\r\n"];
        yield 'minus sign' => [$head . "-3\r\nabc\r\n0\r\n\r\n"];
        yield 'empty size' => [$head . "\r\nabc\r\n0\r\n\r\n"];
        yield 'leading space' => [$head . " 3\r\nabc\r\n0\r\n\r\n"];
        yield 'size overflow' => [$head . "fffffffffffffffffff\r\nabc\r\n0\r\n\r\n"];
        yield 'missing CRLF after data' => [$head . "3\r\nabcX\r\n0\r\n\r\n"];
        yield 'bare LF after size' => [$head . "3\nabc\r\n0\r\n\r\n"];
    }

    /** @return iterable<string, array{string}> */
    public static function obsFold(): iterable
    {
        yield 'space fold' => ["GET /hello HTTP/1.1\r\nHost: x\r\nX-A: one\r\n two\r\n\r\n"];
        yield 'tab fold' => ["GET /hello HTTP/1.1\r\nHost: x\r\nX-A: one\r\n\ttwo\r\n\r\n"];
        yield 'fold before first header' => ["GET /hello HTTP/1.1\r\n Host: x\r\n\r\n"];
    }

    /** @return iterable<string, array{string}> */
    public static function controlCharacters(): iterable
    {
        yield 'NUL in target' => ["GET /hel\0lo HTTP/1.1\r\nHost: x\r\n\r\n"];
        yield 'NUL in value' => ["GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n"];
        yield 'bare CR in value' => ["GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n"];
        yield 'bare CR in request line' => ["GET /hello\r HTTP/1.1\r\nHost: x\r\n\r\n"];
        yield 'bare LF line end' => ["GET /hello HTTP/1.1\nHost: x\n\n"];
        yield 'DEL in name' => ["GET /hello HTTP/1.1\r\nHost: x\r\nX-\x7fA: a\r\n\r\n"];
        yield 'escape in value' => ["GET /hello HTTP/1.1\r\nHost: x\r\nX-A: \x1b[31m\r\n\r\n"];
        yield 'space in name' => ["GET /hello HTTP/1.1\r\nHost: x\r\nX A: a\r\n\r\n"];
        yield 'empty name' => ["GET /hello HTTP/1.1\r\nHost: x\r\n: a\r\n\r\n"];
        yield 'two spaces in request line' => ["GET  /hello HTTP/1.1\r\nHost: x\r\n\r\n"];
        yield 'space in target' => ["GET /hel lo HTTP/1.1\r\nHost: x\r\n\r\n"];
    }

    /** @return iterable<string, array{string}> */
    public static function hostAbuse(): iterable
    {
        yield 'missing Host on 1.1' => ["GET /hello HTTP/1.1\r\n\r\n"];
        yield 'duplicate Host' => ["GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"];
        yield 'Host with userinfo' => ["GET /hello HTTP/1.1\r\nHost: user@evil\r\n\r\n"];
        yield 'Host with path' => ["GET /hello HTTP/1.1\r\nHost: a/b\r\n\r\n"];
        yield 'Host with space' => ["GET /hello HTTP/1.1\r\nHost: a b\r\n\r\n"];
        yield 'Host list' => ["GET /hello HTTP/1.1\r\nHost: a, b\r\n\r\n"];
        yield 'Host bad port' => ["GET /hello HTTP/1.1\r\nHost: a:8x\r\n\r\n"];
    }

    /** @dataProvider smuggling */
    public function testRequestSmugglingIsRefused(string $request): void
    {
        $this->assertRefused($request, 400, 501);
    }

    /** @dataProvider badChunks */
    public function testBadChunkSizesAreRefused(string $request): void
    {
        $this->assertRefused($request, 400);
    }

    /** @dataProvider obsFold */
    public function testObsoleteLineFoldingIsRefused(string $request): void
    {
        $this->assertRefused($request, 400);
    }

    /** @dataProvider controlCharacters */
    public function testControlCharactersAndMalformedLinesAreRefused(string $request): void
    {
        $this->assertRefused($request, 400);
    }

    /** @dataProvider hostAbuse */
    public function testMissingDuplicateOrMalformedHostIsRefused(string $request): void
    {
        $this->assertRefused($request, 400);
    }

    public function testUnsupportedVersionGets505(): void
    {
        $this->assertRefused("GET /hello HTTP/2.0\r\nHost: x\r\n\r\n", 505);
        $this->assertRefused("GET /hello HTTP/1.2\r\nHost: x\r\n\r\n", 505);
        $this->assertRefused("GET /hello HTTX/1.1\r\nHost: x\r\n\r\n", 400);
    }

    private function assertRefused(string $request, int ...$statuses): void
    {
        $server = self::$server;
        self::assertNotNull($server);
        $client = RawClient::to($server);
        $client->trySend($request . self::FOLLOW);
        $raw = $client->readUntilClosed(5.0);
        $parsed = RawClient::parse($raw, false, true);
        self::assertNotNull($parsed, 'expected an error response, got: ' . var_export($raw, true));
        [$response, $used] = $parsed;
        self::assertContains($response['status'], $statuses, 'response: ' . $response['raw']);
        self::assertSame('close', $response['headers']['connection'][0] ?? null);
        self::assertSame('', substr($raw, $used), 'nothing may be answered after a refused request');
        self::assertStringNotContainsString('Hello, World!', $raw);

        $check = RawClient::to($server);
        $check->send(self::FOLLOW);
        self::assertSame(200, $check->readResponse()['status'] ?? null, 'the server keeps serving');
        $check->close();
    }
}
