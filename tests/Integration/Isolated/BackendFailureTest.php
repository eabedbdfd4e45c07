<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Isolated;

use Kiln\Tests\Support\RawClient;

/** 502, 503, 504 and a client that leaves: each answered, and the pool serves again afterwards. */
final class BackendFailureTest extends IsolatedTestCase
{
    public function testAFullQueueIsAnswered503WithRetryAfterWhileTheQueuedRequestStillRuns(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '1', 'KILN_TEST_POOL_QUEUE' => '1']);
        $this->waitForChildren(1);
        $running = RawClient::to($server);
        $running->send("GET /legacy/sleep.php?ms=1500 HTTP/1.1\r\nHost: test\r\n\r\n");
        $this->waitForPool(['busy' => 1, 'waiting' => 0]);
        $queued = RawClient::to($server);
        $queued->send("GET /legacy/sleep.php?ms=10 HTTP/1.1\r\nHost: test\r\n\r\n");
        $this->waitForPool(['busy' => 1, 'waiting' => 1]);
        $started = microtime(true);
        $refused = $this->get('/legacy/hello.php');
        self::assertSame(503, $refused['status']);
        self::assertSame('1', $refused['headers']['retry-after'] ?? null);
        self::assertLessThan(0.5, microtime(true) - $started, 'refused at once, not after a wait');
        self::assertSame(200, $running->readResponse(10.0)['status'] ?? 0);
        self::assertSame(200, $queued->readResponse(10.0)['status'] ?? 0);
        $server->waitForLog('~503: All 1 php-cgi children are busy with this worker\'s requests and 1 requests wait already \(--pool-queue\)~', 2.0);
        $running->close();
        $queued->close();
    }

    public function testAScriptPastTheTimeLimitGets504AndThePoolServesAgainOnceItsChildIsFree(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '1', 'KILN_TEST_TIME_LIMIT' => '3']);
        $child = (int) $this->get('/legacy/pid.php')['body'];
        $started = microtime(true);
        $response = $this->get('/legacy/sleep.php?ms=4000');
        $elapsed = microtime(true) - $started;
        self::assertSame(504, $response['status']);
        self::assertGreaterThanOrEqual(2.9, $elapsed);
        // The one child ends the script (php-cgi has no way to be told to stop it) and takes the next.
        $next = $this->get('/legacy/pid.php');
        self::assertSame([200, (string) $child], [$next['status'], $next['body']]);
    }

    public function testAPhpCgiThatCannotBeExecutedGives502AndTheRoutesKeepServing(): void
    {
        $this->serve(['KILN_TEST_PHP_CGI' => '/nonexistent/php-cgi']);
        $started = microtime(true);
        $response = $this->get('/legacy/hello.php');
        self::assertSame(502, $response['status']);
        self::assertLessThan(2.0, microtime(true) - $started);
        self::assertSame(200, $this->get('/hello')['status']);
        $this->server()->waitForLog('~cannot start: /nonexistent/php-cgi is not an executable file; restarting it in~', 2.0);
    }

    public function testAPhpCgiThatExitsWithoutListeningGives502AndIsRetriedWithBackoff(): void
    {
        $this->serve(['KILN_TEST_PHP_CGI' => '/bin/true']);
        self::waitUntil(fn(): bool => substr_count($this->server()->log(), 'before listening on its socket') >= 4, 5.0, 'the failed starts to be logged');
        self::assertSame(502, $this->get('/legacy/hello.php')['status']);
        preg_match_all('~restarting it in ([\d.]+) s \(failure (\d+) in a row\)~', $this->server()->log(), $m);
        $delays = array_map('floatval', $m[1]);
        self::assertGreaterThan($delays[0], max($delays), 'backs off: ' . implode(', ', $m[1]));
    }

    public function testAClientThatLeavesMidResponseFreesTheChildOnceTheScriptEnds(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        $child = $this->get('/legacy/pid.php')['body'];
        $left = microtime(true);
        $this->leaveMidResponse($server, 0.8);
        // php-cgi runs the script to its end (it ignores ABORT_REQUEST): the child stays taken until then,
        // and is then free again, the same process, never killed.
        self::assertSame(1, $this->poolStats()['busy'], 'still running the abandoned script');
        $this->waitForPool(['busy' => 0, 'idle' => 1], 3.0);
        self::assertGreaterThan(0.5, microtime(true) - $left, 'freed when the script ended, not at once');
        $next = $this->get('/legacy/pid.php');
        self::assertSame([200, $child], [$next['status'], $next['body']]);
        self::assertStringNotContainsString('is killed and replaced', $server->log());
    }

    public function testALeftRequestFreesItsPlaceWhenItsScriptEndsEvenWhileAnotherRequestRuns(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '2']);
        $this->waitForChildren(2);
        $long = RawClient::to($server);
        $long->send("GET /legacy/sleep.php?ms=4000 HTTP/1.1\r\nHost: test\r\n\r\n");
        $this->waitForPool(['busy' => 1]);
        $left = microtime(true);
        $this->leaveMidResponse($server, 0.5);
        // The left script ends after about 0.5 s; its place is free then, though the other request still runs
        // (it used to be held until the abort grace and a second more had passed: about 3 s).
        $this->waitForPool(['busy' => 1, 'idle' => 1], 2.0);
        self::assertLessThan(2.0, microtime(true) - $left);
        self::assertSame(200, $long->readResponse(10.0)['status'] ?? 0);
        $long->close();
    }

    public function testAClientThatLeavesALongResponseIsLetGoAfterTheAbortGraceAndThePoolServesOn(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);
        $this->leaveMidResponse($server, 30);
        // php-cgi ignores ABORT_REQUEST; after the grace the request's connection is closed, and the child
        // finds it closed at its next write and ends the script. The next request is served either way.
        $next = $this->get('/legacy/pid.php', 10.0);
        self::assertSame(200, $next['status']);
        self::assertContains((int) $next['body'], $this->phpCgiPids());
    }

    /** @return array<string, int> */
    private function poolStats(): array
    {
        $stats = json_decode($this->get('/pool')['body'], true, 2, JSON_THROW_ON_ERROR);
        self::assertIsArray($stats);
        return $stats;
    }

    /** @param array<string, int> $expected */
    private function waitForPool(array $expected, float $timeout = 5.0): void
    {
        self::waitUntil(fn(): bool => array_intersect_key($this->poolStats(), $expected) == $expected, $timeout, 'pool ' . json_encode($expected));
    }

    private function leaveMidResponse(\Kiln\Tests\Support\KilnProcess $server, float $seconds): void
    {
        $client = RawClient::to($server);
        $client->send("GET /legacy/stream.php?s=$seconds HTTP/1.1\r\nHost: test\r\n\r\n");
        $socket = $client->socket();
        $read = [$socket];
        $write = $except = null;
        self::assertSame(1, stream_select($read, $write, $except, 5), 'the response starts');
        self::assertStringContainsString('200 OK', (string) fread($socket, 200));
        $client->close();
    }
}
