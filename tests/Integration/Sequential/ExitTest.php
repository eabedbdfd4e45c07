<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\RawClient;

/**
 * exit() and die() end the worker process, as in PHP: the response the script produced is still sent,
 * whole, the worker is replaced, and its other connections are closed gracefully.
 */
final class ExitTest extends SequentialTestCase
{
    public function testExitMidPageDeliversTheResponseTheScriptProducedAndTheWorkerIsReplaced(): void
    {
        $pid = $this->workerPid();
        $response = $this->get('/exit.php');
        self::assertSame(202, $response['status']);
        self::assertSame(['yes'], $response['headers']['x-before-exit']);
        self::assertSame('before exit; in an inner buffer;exit message', $response['body']);
        self::assertSame(['close'], $response['headers']['connection']);
        $replaced = $this->waitForReplacement($pid);
        self::assertSame($replaced, $this->workerPid());
        self::assertStringNotContainsString('before serving a request', $this->server()->log(), 'a worker that answered is not a crash');
    }

    public function testTheWorkersOtherKeepAliveConnectionIsClosedGracefully(): void
    {
        $server = $this->server();
        $idle = RawClient::to($server);
        $idle->send("GET /pid.php HTTP/1.1\r\nHost: test\r\n\r\n");
        $first = $idle->readResponse();
        self::assertNotNull($first);
        self::assertSame(200, $first['status']);

        $exiting = RawClient::to($server);
        $exiting->send("GET /exit.php HTTP/1.1\r\nHost: test\r\n\r\n");
        $response = $exiting->readResponse();
        self::assertNotNull($response);
        self::assertSame(202, $response['status']);
        self::assertTrue($exiting->isClosedWithin(2.0));

        // The idle keep-alive connection of the same worker: closed with FIN (an empty read), not reset.
        $socket = $idle->socket();
        $read = [$socket];
        $write = $except = null;
        self::assertSame(1, stream_select($read, $write, $except, 5), 'the idle connection was not closed');
        error_clear_last();
        $data = @fread($socket, 1024);
        self::assertSame('', $data, 'expected an orderly close, got ' . var_export($data, true) . ' ' . (error_get_last()['message'] ?? ''));
        self::assertTrue(feof($socket));
        $this->waitForReplacement((int) $first['body']);
    }

    public function testARequestThatReachedTheWorkerButNeverRanGetsA503ToRetryNotAnEmptyReply(): void
    {
        $server = $this->server();
        $pid = $this->workerPid();
        // Connected first, so the worker accepts it while idle; its request comes while a script runs.
        $waiting = RawClient::to($server);
        usleep(200_000);
        $exiting = RawClient::to($server);
        $exiting->send("GET /slow-exit.php HTTP/1.1\r\nHost: test\r\n\r\n");
        usleep(100_000);
        $waiting->send("GET /pid.php HTTP/1.1\r\nHost: test\r\n\r\n");

        $exited = $exiting->readResponse();
        self::assertNotNull($exited);
        self::assertSame('exited after 0.4 s', $exited['body']);
        $refused = $waiting->readResponse();
        self::assertNotNull($refused, 'the request that never ran got an empty reply');
        self::assertSame(503, $refused['status']);
        self::assertSame(['1'], $refused['headers']['retry-after']);
        self::assertSame(['close'], $refused['headers']['connection']);
        self::assertTrue($waiting->isClosedWithin(2.0));
        $this->waitForReplacement($pid);
        self::assertSame(200, $this->get('/pid.php')['status'], 'sent again, it is served');
    }

    /**
     * A request on a kept-alive connection that reached the worker while a script ran and ended it: the connection is
     * closed unanswered, and the client (curl here, as browsers) sends the request again on a new connection, which
     * the replacement serves. A 503 there would be an answer: shown, not retried.
     */
    public function testARequestOnAKeptAliveConnectionThatNeverRanIsSentAgainByItsClient(): void
    {
        $server = $this->server();
        $marker = sys_get_temp_dir() . '/kiln-exit-' . bin2hex(random_bytes(6));
        $url = $server->baseUrl() . '/pid.php';
        // Two GETs on one connection, the second two seconds after the first began (--rate, curl 7.84 or later).
        $curl = proc_open(
            ['curl', '-sv', '--max-time', '20', '--rate', '30/m', '-o', '/dev/null', '-o', '/dev/null', '-w', '%{http_code} %{num_connects}\n', $url, $url],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
        );
        self::assertIsResource($curl);
        try {
            stream_set_blocking($pipes[2], false);
            $trace = '';
            $read = static function () use ($pipes, &$trace): string {
                return $trace .= (string) fread($pipes[2], 65536);
            };
            self::waitFor(static fn(): bool => preg_match('~^< HTTP/1\.1 200~m', $read()) === 1, 'curl\'s first response', $trace);
            // The worker runs a script until told to end; curl's second request comes on its kept-alive connection meanwhile.
            $exiting = RawClient::to($server);
            $exiting->send('GET /exit-when-told.php?marker=' . substr(basename($marker), \strlen('kiln-exit-')) . " HTTP/1.1\r\nHost: test\r\n\r\n");
            self::waitFor(static fn(): bool => file_exists("$marker.started"), 'the script to start', $trace);
            self::assertSame(1, preg_match_all('~^> GET /pid\.php~m', $read()), "the script began after curl's second request: too slow a machine for this test; curl:\n$trace");
            self::waitFor(static fn(): bool => preg_match_all('~^> GET /pid\.php~m', $read()) >= 2, 'curl\'s second request', $trace);
            usleep(50_000); // its bytes are in the socket (curl prints the request as it writes it)
            touch($marker);

            self::assertSame('exited when told', $exiting->readResponse()['body'] ?? null);
            $stdout = stream_get_contents($pipes[1]);
            stream_set_blocking($pipes[2], true);
            $trace .= stream_get_contents($pipes[2]);
        } finally {
            $status = proc_close($curl);
            @unlink($marker);
            @unlink("$marker.started");
        }
        self::assertSame(0, $status, "curl:\n$trace");
        self::assertSame("200 1\n200 1\n", $stdout, "both answered, the second on a new connection; curl:\n$trace");
        $server->waitForLog('~worker exited; closed 1 kept-alive connection\(s\) with a request not yet started, for the client to send again~');
        self::assertDoesNotMatchRegularExpression('~^< HTTP/1\.1 503~m', $trace);
    }

    private static function waitFor(\Closure $condition, string $what, string &$trace): void
    {
        $until = microtime(true) + 10.0;
        while (!$condition()) {
            if (microtime(true) > $until) {
                self::fail("timed out waiting for $what; curl so far:\n$trace");
            }
            usleep(10_000);
        }
    }

    public function testShutdownFunctionsRunBeforeTheResponseLeavesAndTheirOutputIsPartOfIt(): void
    {
        $pid = $this->workerPid();
        $response = $this->get('/shutdown.php');
        self::assertSame(200, $response['status']);
        self::assertSame('main body shutdown function ran', $response['body']);
        self::assertSame(['ran'], $response['headers']['x-shutdown']);
        $this->waitForReplacement($pid);
        self::assertStringContainsString("(pid $pid) will be replaced: /shutdown.php registered a shutdown function", $this->server()->log());
    }

    public function testAShutdownFunctionThatCallsExitStillGetsTheResponseOut(): void
    {
        $pid = $this->workerPid();
        $response = $this->get('/shutdown-exit.php');
        self::assertSame(200, $response['status']);
        self::assertSame('main body then the shutdown function', $response['body']);
        self::assertSame(['exited'], $response['headers']['x-shutdown']);
        $this->waitForReplacement($pid);
        self::assertSame(200, $this->get('/shutdown-exit.php')['status'], 'the replacement serves');
    }

    /**
     * One request before its --max-requests, a worker winds down (its next response closes its connection); a
     * script's exit() then still tells the supervisor why the worker goes, before it goes.
     */
    public function testAnExitOnAWorkerWindingDownBeforeItsLastRequestIsStillAnnounced(): void
    {
        $this->startServer(['KILN_MAX_REQUESTS' => '2']);
        $pid = $this->workerPid(); // its first request: the worker winds down
        self::assertSame(202, $this->get('/exit.php')['status']);
        $this->waitForReplacement($pid);
        $this->server()->waitForLog("~worker 1 \\(pid $pid\\) will be replaced: a script ended it with exit\\(\\)~", 5.0);
        self::assertStringNotContainsString("(pid $pid) will be replaced: served", $this->server()->log());
    }

    /**
     * A worker ended by exit() said so: once its replacement is ready, the supervisor does not send it the drain's
     * SIGQUIT, which would find PHP shutting down and end the process by the signal (a core dump where kept).
     */
    public function testAWorkerEndedByExitEndsByItsOwnExitNotBySignal(): void
    {
        $this->startServer(['KILN_LOG_LEVEL' => 'debug']);
        $pids = [];
        for ($i = 0; $i < 3; $i++) {
            $pid = $this->workerPid();
            self::assertSame(202, $this->get('/exit.php')['status']);
            $this->waitForReplacement($pid);
            $this->server()->waitForLog("~worker 1 \\(pid $pid\\) (exited with code|killed by signal)~", 5.0);
            $pids[] = $pid;
        }
        $log = $this->server()->log();
        foreach ($pids as $pid) {
            self::assertStringContainsString("worker 1 (pid $pid) exited with code 0", $log);
            self::assertStringNotContainsString("(pid $pid) killed by signal", $log);
        }
    }

    public function testManyExitsInARowKeepTheServerAnsweringWithoutBackoff(): void
    {
        for ($i = 0; $i < 5; $i++) {
            $started = microtime(true);
            self::assertSame(202, $this->get('/exit.php')['status']);
            self::assertLessThan(2.0, microtime(true) - $started);
        }
        self::assertSame(200, $this->get('/pid.php')['status']);
        self::assertStringNotContainsString('failure', $this->server()->log());
        // An exit() is ordinary PHP: the worker says it goes, and its exit is no warning.
        $this->server()->waitForLog('~will be replaced: a script ended it with exit\(\)~', 5.0);
        self::assertDoesNotMatchRegularExpression('~\[warning\].*replacing it now~', $this->server()->log());
    }
}
