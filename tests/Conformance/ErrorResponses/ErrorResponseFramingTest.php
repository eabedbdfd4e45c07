<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\ErrorResponses;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\StrictHttp;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * Every error response Kiln makes itself, triggered over real sockets and read strictly (StrictHttp):
 * valid status and header lines, one of each framing field, a body of exactly Content-Length bytes, nothing
 * after a response that closes, and a second request served when the connection is kept.
 */
final class ErrorResponseFramingTest extends TestCase
{
    private const FIXTURES = __DIR__ . '/../../Fixtures';

    /** @var array<string, KilnProcess> */
    private static array $servers = [];

    public static function tearDownAfterClass(): void
    {
        foreach (self::$servers as $server) {
            $server->stop();
        }
        self::$servers = [];
    }

    protected function tearDown(): void
    {
        // A server whose worker was made to die is not shared with the next test.
        if (isset(self::$servers['fatal'])) {
            self::$servers['fatal']->stop();
            unset(self::$servers['fatal']);
        }
    }

    /** @return iterable<string, array{string, int}> */
    public static function refusedRequests(): iterable
    {
        yield 'a malformed request line is 400' => ["GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n", 400];
        yield 'a request without Host is 400' => ["GET / HTTP/1.1\r\n\r\n", 400];
        yield 'a body over the limit is 413' => ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n", 413];
        yield 'a target over the limit is 414' => ['GET /' . str_repeat('a', 9000) . " HTTP/1.1\r\nHost: x\r\n\r\n", 414];
        yield 'a header block over the limit is 431' => ["GET / HTTP/1.1\r\nHost: x\r\nX-Big: " . str_repeat('b', 9000) . "\r\n\r\n", 431];
        yield 'an unknown transfer coding is 501' => ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501];
        yield 'CONNECT is 501' => ["CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 501];
        yield 'an unsupported version is 505' => ["GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505];
    }

    #[DataProvider('refusedRequests')]
    public function testARequestTheParserRefusesGetsAFramedErrorAndTheConnectionCloses(string $request, int $status): void
    {
        $client = StrictHttp::to($this->server('handler'));
        $client->send($request);
        $response = $client->read();
        self::assertSame($status, $response['status']);
        self::assertTrue($response['close'], 'nothing after a refused request is read');
        $client->close();
    }

    public function testAHeadThatIsNotFinishedInTimeGetsAFramed408(): void
    {
        $client = StrictHttp::to($this->server('handler'));
        $client->send("GET / HTTP/1.1\r\nHost: x\r\n");
        $response = $client->read(10.0);
        self::assertSame(408, $response['status']);
        self::assertTrue($response['close']);
    }

    public function testAHandlerThatThrowsGetsAFramed500AndTheConnectionServesOn(): void
    {
        $this->assertKeptAfter('handler', "GET /throw HTTP/1.1\r\nHost: x\r\n\r\n", 500);
    }

    public function testAResponseTheServerRefusesToSendBecomesAFramed500(): void
    {
        $this->assertClosedAfter('handler', "GET /bad-header HTTP/1.1\r\nHost: x\r\n\r\n", 500);
    }

    public function testARequestPastTheConcurrencyLimitGetsAFramed503AndTheConnectionServesOn(): void
    {
        $busy = StrictHttp::to($this->server('handler'));
        $busy->send("GET /sleep?s=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        usleep(200_000);
        $client = StrictHttp::to($this->server('handler'));
        $client->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        $response = $client->read();
        self::assertSame(503, $response['status']);
        self::assertSame(['1'], $response['headers']['retry-after'] ?? null);
        self::assertFalse($response['close']);
        self::assertSame(200, $busy->read()['status']);
        $client->send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        self::assertSame("hello\n", $client->read()['body']);
    }

    public function testAConnectionPastTheCapGetsAFramed503(): void
    {
        $server = $this->server('cap');
        $held = StrictHttp::to($server);
        $held->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertSame(200, $held->read()['status']);
        $client = StrictHttp::to($server);
        $client->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        $response = $client->read();
        self::assertSame(503, $response['status']);
        self::assertSame(['1'], $response['headers']['retry-after'] ?? null);
        self::assertTrue($response['close']);
        $held->close();
    }

    public function testAWorkerThatDiesAnswersItsRequestsWithFramed500sAndTheUnstartedOneWithA503(): void
    {
        $server = $this->server('fatal');
        $inFlight = StrictHttp::to($server);
        $inFlight->send("GET /sleep?s=5 HTTP/1.1\r\nHost: x\r\n\r\n");
        $unstarted = StrictHttp::to($server);
        $unstarted->send("GET / HTTP/1.1\r\nHost: x\r\n");
        usleep(300_000);
        $dying = StrictHttp::to($server);
        $dying->send("GET /fatal HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertSame(500, $dying->read()['status']);
        $response = $inFlight->read();
        self::assertSame(500, $response['status']);
        self::assertTrue($response['close']);
        $response = $unstarted->read();
        self::assertSame(503, $response['status']);
        self::assertSame(['1'], $response['headers']['retry-after'] ?? null);
        self::assertTrue($response['close']);
    }

    /** @return iterable<string, array{string, int}> */
    public static function documentRootRefusals(): iterable
    {
        yield 'a missing file is 404' => ['/missing.txt', 404];
        yield 'a dotfile is refused' => ['/.env', 404];
        yield 'a directory without an index is 403' => ['/empty-dir/', 403];
        yield 'a path escaping the root is 400' => ['/%2e%2e/errors/app.php', 400];
        yield 'a NUL in the path is 400' => ['/file.txt%00.php', 400];
        yield 'a missing CGI script is 404' => ['/cgi-bin/missing', 404];
        yield 'a CGI script that is not executable is 403' => ['/cgi-bin/not-executable.sh', 403];
    }

    #[DataProvider('documentRootRefusals')]
    public function testADocumentRootRefusalIsFramedAndTheConnectionServesOn(string $target, int $status): void
    {
        $this->assertKeptAfter('site', "GET $target HTTP/1.1\r\nHost: x\r\n\r\n", $status, '/file.txt');
    }

    public function testAnUnsatisfiableRangeIsAFramed416(): void
    {
        $this->assertKeptAfter('site', "GET /file.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=100-\r\n\r\n", 416, '/file.txt');
    }

    public function testAStaticFileAskedWithAWrongMethodIsAFramed405(): void
    {
        $this->assertKeptAfter('site', "DELETE /file.txt HTTP/1.1\r\nHost: x\r\n\r\n", 405, '/file.txt');
    }

    public function testAMalformedBodyForASequentialScriptIsAFramed400(): void
    {
        $body = "--x\r\nnot a header line\r\n\r\nvalue\r\n--x--\r\n";
        $this->assertKeptAfter('site', "POST /seq/bad-body.php HTTP/1.1\r\nHost: x\r\n"
            . "Content-Type: multipart/form-data; boundary=x\r\nContent-Length: " . \strlen($body) . "\r\n\r\n$body", 400, '/file.txt');
    }

    public function testASequentialScriptWithAFatalErrorIsAFramed500(): void
    {
        $this->assertClosedAfter('site', "GET /seq/fatal.php HTTP/1.1\r\nHost: x\r\n\r\n", 500);
    }

    public function testASequentialScriptPastItsTimeLimitIsAFramed504(): void
    {
        $this->assertClosedAfter('site', "GET /seq/spin.php HTTP/1.1\r\nHost: x\r\n\r\n", 504);
    }

    public function testAnIsolatedScriptPastItsTimeLimitIsAFramed504(): void
    {
        $this->assertKeptAfter('site', "GET /iso/spin.php HTTP/1.1\r\nHost: x\r\n\r\n", 504, '/file.txt');
    }

    public function testAnIsolatedScriptWhoseChildDiesIsAFramed502(): void
    {
        // The only child may still run the spinning script of the 504 case: PHP ends it a second past the limit.
        $this->waitForIsolatedChild($this->server('site'));
        $this->assertKeptAfter('site', "GET /iso/die.php HTTP/1.1\r\nHost: x\r\n\r\n", 502, '/file.txt');
    }

    public function testAnIsolatedScriptWithThePoolFullIsAFramed503(): void
    {
        $server = $this->server('site');
        // One child (--pool-size=1) running a script, one request queued (--pool-queue=1): the third is refused.
        $this->waitForIsolatedChild($server);
        $running = StrictHttp::to($server);
        $running->send("GET /iso/sleep.php?ms=1500 HTTP/1.1\r\nHost: x\r\n\r\n");
        usleep(300_000);
        $queued = StrictHttp::to($server);
        $queued->send("GET /iso/sleep.php HTTP/1.1\r\nHost: x\r\n\r\n");
        usleep(300_000);
        $response = $this->assertKeptAfter('site', "GET /iso/sleep.php HTTP/1.1\r\nHost: x\r\n\r\n", 503, '/file.txt');
        self::assertArrayHasKey('retry-after', $response['headers']);
        self::assertSame(200, $running->read()['status']);
        self::assertSame(200, $queued->read()['status']);
    }

    public function testAForkedScriptPastItsTimeLimitIsAFramed504(): void
    {
        $this->assertKeptAfter('site', "GET /fork/spin.php HTTP/1.1\r\nHost: x\r\n\r\n", 504, '/file.txt');
    }

    public function testACgiScriptThatAnswersGarbageIsAFramed502(): void
    {
        $this->assertKeptAfter('site', "GET /cgi-bin/garbage.pl HTTP/1.1\r\nHost: x\r\n\r\n", 502, '/file.txt');
    }

    public function testACgiScriptPastItsTimeLimitIsAFramed504(): void
    {
        $this->assertKeptAfter('site', "GET /cgi-bin/hang.py HTTP/1.1\r\nHost: x\r\n\r\n", 504, '/file.txt');
    }

    public function testAFastCgiUpstreamThatIsDownIsAFramed502(): void
    {
        $this->assertKeptAfter('site', "GET /tool.py HTTP/1.1\r\nHost: x\r\n\r\n", 502, '/file.txt');
    }

    /** Until the pool's child answers (it may still be replacing one an earlier case killed), every answer framed. */
    private function waitForIsolatedChild(KilnProcess $server): void
    {
        $deadline = microtime(true) + 10.0;
        do {
            $client = StrictHttp::to($server);
            $client->send("GET /iso/sleep.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            $status = $client->read()['status'];
            $client->close();
        } while ($status !== 200 && microtime(true) < $deadline && usleep(100_000) === null);
        self::assertSame(200, $status, 'the php-cgi child answers');
    }

    /**
     * Sends $request, reads a response with $status that keeps the connection, then asks for $next on it.
     *
     * @return array{status: int, headers: array<string, list<string>>, body: string, close: bool}
     */
    private function assertKeptAfter(string $kind, string $request, int $status, string $next = '/'): array
    {
        $client = StrictHttp::to($this->server($kind));
        $client->send($request);
        $response = $client->read();
        self::assertSame($status, $response['status'], $response['body']);
        self::assertFalse($response['close'], 'the connection is kept after this response');
        $client->send("GET $next HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        self::assertSame(200, $client->read()['status'], 'a second request on the same connection is served');
        $client->close();

        return $response;
    }

    private function assertClosedAfter(string $kind, string $request, int $status): void
    {
        $client = StrictHttp::to($this->server($kind));
        $client->send($request);
        $response = $client->read();
        self::assertSame($status, $response['status'], $response['body']);
        self::assertTrue($response['close']);
        $client->close();
    }

    private function server(string $kind): KilnProcess
    {
        return self::$servers[$kind] ??= match ($kind) {
            'handler' => KilnProcess::start(self::FIXTURES . '/errors/handler.php', [
                '--workers=1', '--limit-concurrency=1', '--limit-header-timeout=1',
            ]),
            'cap' => KilnProcess::start(self::FIXTURES . '/errors/handler.php', ['--workers=1', '--connections=1']),
            'fatal' => KilnProcess::start(self::FIXTURES . '/errors/handler.php', ['--workers=1']),
            'site' => KilnProcess::start(self::FIXTURES . '/errors/app.php', [
                '--workers=1', '--time-limit=2', '--pool-size=1', '--pool-queue=1', '--fork-max=1',
                '--cgi-bin=' . self::FIXTURES . '/cgi-bin', '--fastcgi-map=.py=127.0.0.1:1',
            ]),
            default => throw new \ValueError("no server $kind"),
        };
    }
}
