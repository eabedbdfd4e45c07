<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cgi;

use Kiln\Tests\Support\KilnPerClass;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/** The cgi tier through a real server: Python, Perl and shell scripts under tests/Fixtures/cgi-bin. */
final class CgiRunnerTest extends TestCase
{
    use KilnPerClass;

    private const APP = __DIR__ . '/fixture/app.php';

    public static function setUpBeforeClass(): void
    {
        self::$server = KilnProcess::start(self::APP, ['--workers=1'], ['KILN_TEST_CGI_MAX' => '2', 'KILN_TEST_CGI_TIMEOUT' => '1.5']);
    }

    public function testAGetWithAQueryReachesThePythonScriptAsMetaVariables(): void
    {
        $response = $this->get('/cgi-bin/echo.py/extra/p%20ath?a=1&b=two', ['Proxy' => 'http://evil.example:1', 'X-Custom' => 'yes']);
        self::assertSame(200, $response['status']);
        self::assertSame('application/json', $response['headers']['content-type']);
        self::assertSame('echo.py', $response['headers']['x-script']);
        $echo = \json_decode($response['body'], true, flags: \JSON_THROW_ON_ERROR);
        self::assertIsArray($echo);
        $env = $echo['env'];
        self::assertSame('GET', $env['REQUEST_METHOD']);
        self::assertSame('a=1&b=two', $env['QUERY_STRING']);
        self::assertSame('/cgi-bin/echo.py', $env['SCRIPT_NAME']);
        self::assertSame('/extra/p ath', $env['PATH_INFO']);
        self::assertSame('/cgi-bin/echo.py/extra/p%20ath?a=1&b=two', $env['REQUEST_URI']);
        self::assertSame('CGI/1.1', $env['GATEWAY_INTERFACE']);
        self::assertSame('yes', $env['HTTP_X_CUSTOM']);
        self::assertSame(\realpath(__DIR__ . '/../../Fixtures/cgi-bin/echo.py'), $env['SCRIPT_FILENAME']);
        self::assertArrayNotHasKey('HTTP_PROXY', $env, 'httpoxy');
        self::assertSame('/usr/local/bin:/usr/bin:/bin', $env['PATH']);
        self::assertArrayNotHasKey('HOME', $env, 'the worker\'s own environment is not passed on');
    }

    public function testAScriptDoesNotHoldConnectionsTheWorkerHadOpen(): void
    {
        $kept = RawClient::to($this->server());
        $kept->send("GET /route HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertNotNull($kept->readResponse());
        $slow = $this->open('/cgi-bin/slow.py?2'); // started while $kept is open
        $this->readUntil($slow, 'started', 5.0);
        $kept->send("GET /route HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        self::assertNotNull($kept->readResponse());
        self::assertTrue($kept->isClosedWithin(1.0), 'the close reaches the client while the script still runs');
        $kept->close();
        \fclose($slow);
        $this->waitForFreeSlots();
    }

    public function testAPostBodyGoesToThePerlScriptOnStdin(): void
    {
        $body = \str_repeat('posted data ', 1000);
        $client = RawClient::to($this->server());
        $client->send("POST /cgi-bin/post.pl HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: " . \strlen($body) . "\r\n\r\n" . $body);
        $response = $client->readResponse();
        $client->close();
        self::assertNotNull($response);
        self::assertSame(200, $response['status']);
        self::assertSame('POST text/plain ' . \strlen($body) . "\n" . \strtoupper($body), $response['body']);
    }

    public function testStatusAndEverySetCookieFromTheScriptReachTheClient(): void
    {
        $client = RawClient::to($this->server());
        $client->send("GET /cgi-bin/headers.pl?x=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        $response = $client->readResponse();
        $client->close();
        self::assertNotNull($response);
        self::assertSame(201, $response['status']);
        self::assertSame(['a=1; Path=/', 'b=2; HttpOnly'], $response['headers']['set-cookie']);
        self::assertSame(['yes'], $response['headers']['x-perl']);
        self::assertSame(['text/plain; charset=utf-8'], $response['headers']['content-type']);
        self::assertArrayNotHasKey('status', $response['headers']);
        self::assertSame("created by perl, query=x=1\n", $response['body']);
    }

    public function testAHeadRequestGetsTheScriptsHeadersAndNoBody(): void
    {
        $client = RawClient::to($this->server());
        $client->send("HEAD /cgi-bin/headers.pl HTTP/1.1\r\nHost: x\r\n\r\n");
        $response = $client->readResponse(5.0, true);
        self::assertNotNull($response);
        self::assertSame(201, $response['status']);
        self::assertSame(['yes'], $response['headers']['x-perl']);
        self::assertSame('', $response['body']);
        $client->send("GET /route HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertSame('a route', $client->readResponse()['body'] ?? null, 'the connection stays usable');
        $client->close();
        $this->waitForFreeSlots();
    }

    public function testTheBodyIsStreamedAsTheScriptWritesIt(): void
    {
        $socket = $this->open('/cgi-bin/stream.sh');
        $started = \microtime(true);
        $firstLine = $this->readUntil($socket, 'line 1', 5.0);
        $firstAfter = \microtime(true) - $started;
        $all = $firstLine . $this->readUntil($socket, "0\r\n\r\n", 5.0);
        \fclose($socket);
        self::assertStringContainsString('transfer-encoding: chunked', \strtolower($all));
        self::assertLessThan(0.35, $firstAfter, 'line 1 came before the script finished (0.6 s)');
        self::assertStringContainsString('line 3', $all);
    }

    public function testALocalRedirectIsFollowedInsideTheServer(): void
    {
        $response = $this->get('/cgi-bin/redirect.py?local');
        self::assertSame(200, $response['status']);
        $echo = \json_decode($response['body'], true, flags: \JSON_THROW_ON_ERROR);
        self::assertIsArray($echo);
        self::assertSame('redirected=1', $echo['env']['QUERY_STRING']);
        self::assertSame('GET', $echo['env']['REQUEST_METHOD']);
    }

    public function testAClientRedirectIsA302WithItsLocation(): void
    {
        $response = $this->get('/cgi-bin/redirect.py?client');
        self::assertSame(302, $response['status']);
        self::assertSame('https://example.com/elsewhere', $response['headers']['location']);
    }

    public function testALocalRedirectLoopEndsIn502(): void
    {
        self::assertSame(502, $this->get('/cgi-bin/redirect.py?loop')['status']);
    }

    public function testGarbageOutputIsA502AndTheServerKeepsServing(): void
    {
        self::assertSame(502, $this->get('/cgi-bin/garbage.pl')['status']);
        self::assertSame(502, $this->get('/cgi-bin/silent.py')['status']);
        $this->server()->waitForLog('/silent\.py stderr: silent\.py: nothing to say/', 5.0);
        self::assertSame('a route', $this->get('/route')['body']);
    }

    public function testMissingUnsafeAndNonExecutableScriptsAreRefused(): void
    {
        self::assertSame(404, $this->get('/cgi-bin/nope.py')['status']);
        self::assertSame(404, $this->get('/cgi-bin/../cgi-bin/echo.py')['status']);
        self::assertSame(404, $this->get('/cgi-bin/%2e%2e/Cgi/fixture/app.php')['status']);
        self::assertSame(404, $this->get('/cgi-bin/echo.py%2f')['status']);
        self::assertSame(403, $this->get('/cgi-bin/not-executable.sh')['status']);
    }

    public function testAScriptThatNeverAnswersGets504AndIsKilledWithItsChildren(): void
    {
        $file = \sys_get_temp_dir() . '/kiln-cgi-hang-' . \getmypid() . '-' . \bin2hex(\random_bytes(4));
        try {
            $started = \microtime(true);
            $response = $this->get('/cgi-bin/hang.py?' . $file, [], 10.0);
            self::assertSame(504, $response['status']);
            self::assertGreaterThanOrEqual(1.4, \microtime(true) - $started);
            $pids = \array_map('intval', \explode(' ', (string) \file_get_contents($file)));
            self::assertCount(2, $pids);
            $deadline = \microtime(true) + 3.0;
            while (($alive = \array_filter($pids, PeerProcess::alive(...))) !== [] && \microtime(true) < $deadline) {
                \usleep(20_000);
            }
            self::assertSame([], \array_values($alive), 'the script and the process it started are gone');
            $this->waitForFreeSlots();
        } finally {
            @\unlink($file);
        }
    }

    public function testAFullSetOfSlotsAnswers503WithRetryAfter(): void
    {
        $this->waitForFreeSlots();
        $first = $this->open('/cgi-bin/slow.py?1');
        $second = $this->open('/cgi-bin/slow.py?1');
        $this->readUntil($first, 'started', 5.0);
        $this->readUntil($second, 'started', 5.0);
        $refused = $this->get('/cgi-bin/echo.py');
        self::assertSame(503, $refused['status']);
        self::assertSame('1', $refused['headers']['retry-after']);
        $this->readUntil($first, "0\r\n\r\n", 5.0);
        $this->readUntil($second, "0\r\n\r\n", 5.0);
        \fclose($first);
        \fclose($second);
        $this->waitForFreeSlots();
        self::assertSame(200, $this->get('/cgi-bin/echo.py')['status'], 'slots are free again once the scripts exited');
    }

    private function waitForFreeSlots(): void
    {
        $deadline = \microtime(true) + 3.0;
        while (($inUse = $this->get('/slots')['body']) !== '0' && \microtime(true) < $deadline) {
            \usleep(20_000);
        }
        self::assertSame('0', $inUse, 'every CGI slot is freed once its process is gone');
    }
}
