<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\App;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * One worker serves many suspended handlers at once: timers, async() fan-out and child processes
 * wait in the loop, not in the worker. Timings have wide margins: sequential handling would be
 * orders of magnitude slower than the bounds asserted here.
 */
final class ConcurrencyTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/concurrency/app.php';

    private ?KilnProcess $server = null;

    protected function setUp(): void
    {
        $this->server = KilnProcess::start(self::APP, ['--workers=1']);
    }

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
    }

    public function testABackgroundJobThatFailsIsLoggedAndTheWorkerKeepsServing(): void
    {
        $server = $this->server;
        self::assertNotNull($server);
        $pid = HttpClient::get($server->baseUrl() . '/orphan')['body'];
        self::assertStringContainsString('background boom', $server->waitForLog('/Unhandled .*background boom/', 5.0));
        self::assertSame($pid, HttpClient::get($server->baseUrl() . '/pid')['body'], 'the same worker is still serving');
    }

    public function testTwoHundredRequestsThatEachWaitOneSecondCompleteTogetherOnOneWorker(): void
    {
        $started = microtime(true);
        $responses = $this->fire(array_fill(0, 200, ['/delay', 0.0]), 15.0);
        $elapsed = microtime(true) - $started;

        self::assertCount(200, $responses);
        foreach ($responses as $i => $response) {
            self::assertSame(200, $response['status'], "request $i");
            self::assertSame('ok', $response['body'], "request $i");
        }
        self::assertGreaterThanOrEqual(1.0, $elapsed);
        self::assertLessThan(5.0, $elapsed, 'sequentially this would take 200 s');
    }

    public function testAHandlerThatThrowsDoesNotDisturbAConcurrentSlowRequest(): void
    {
        [$slow, $failing] = $this->fire([['/delay', 0.0], ['/throw', 0.05]], 10.0);

        self::assertSame(500, $failing['status']);
        self::assertLessThan(0.9, $failing['time'], 'the failing request is answered while the slow one waits');
        self::assertSame(200, $slow['status']);
        self::assertSame('ok', $slow['body']);
        self::assertSame(200, HttpClient::get($this->server()->baseUrl() . '/hello')['status']);
    }

    public function testAllOfThreeAsyncDelaysTakesAsLongAsTheLongestNotTheirSum(): void
    {
        [$response] = $this->fire([['/fanout', 0.0]], 10.0);

        self::assertSame(200, $response['status'], $response['body']);
        $json = json_decode($response['body'], true, 512, JSON_THROW_ON_ERROR);
        self::assertIsArray($json);
        self::assertSame(['a' => 'a', 'b' => 'b', 'c' => 'c'], $json['values']);
        self::assertGreaterThanOrEqual(0.5, $json['elapsed']);
        self::assertLessThan(1.2, $json['elapsed'], 'sequentially this would take 1.5 s');
    }

    public function testARequestIsAnsweredWhileAnotherWaitsForAChildProcess(): void
    {
        [$process, $hello] = $this->fire([['/process', 0.0], ['/hello', 0.15]], 10.0);

        self::assertSame(200, $process['status'], $process['body']);
        self::assertSame(['exit' => 0, 'stdout' => "hi\n"], json_decode($process['body'], true, 512, JSON_THROW_ON_ERROR));
        self::assertGreaterThanOrEqual(0.5, $process['time']);
        self::assertSame(200, $hello['status']);
        self::assertSame('Hello, World!', $hello['body']);
        self::assertLessThan($process['time'] - 0.2, $hello['time'], '/hello must not wait for the child process');
    }

    private function server(): KilnProcess
    {
        self::assertNotNull($this->server);

        return $this->server;
    }

    /**
     * Sends each [path, after seconds] on its own connection (Connection: close) and reads every answer
     * with non-blocking sockets and one select loop, bounded by $timeout.
     *
     * @param list<array{string, float}> $requests
     *
     * @return list<array{status: int, body: string, time: float}> time: seconds from the start to the answer
     */
    private function fire(array $requests, float $timeout): array
    {
        $server = $this->server();
        $started = microtime(true);
        $deadline = $started + $timeout;
        $sockets = [];
        $pending = [];
        $raw = array_fill(0, \count($requests), '');
        $times = [];
        foreach ($requests as $i => [$path, $after]) {
            $pending[$i] = "GET $path HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n";
        }
        while (\count($times) < \count($requests)) {
            self::assertLessThan($deadline, microtime(true), \count($requests) - \count($times) . ' request(s) unanswered after ' . $timeout . ' s');
            foreach ($pending as $i => $bytes) {
                if (microtime(true) - $started < $requests[$i][1]) {
                    continue;
                }
                $socket = @stream_socket_client("tcp://{$server->host()}:{$server->port()}", $errno, $error, 5.0);
                self::assertNotFalse($socket, "connect $i: $error");
                self::assertSame(\strlen($bytes), fwrite($socket, $bytes), "request $i is sent at once");
                stream_set_blocking($socket, false);
                $sockets[$i] = $socket;
                unset($pending[$i]);
            }
            $read = $sockets;
            $write = null;
            $except = null;
            if ($read === [] || @stream_select($read, $write, $except, 0, 20_000) < 1) {
                usleep($read === [] ? 5_000 : 0);
                continue;
            }
            foreach ($read as $i => $socket) {
                $chunk = fread($socket, 65536);
                $raw[$i] .= (string) $chunk;
                if (($chunk === '' || $chunk === false) && feof($socket)) {
                    $times[$i] = microtime(true) - $started;
                    fclose($socket);
                    unset($sockets[$i]);
                }
            }
        }
        $responses = [];
        foreach (array_keys($requests) as $i) {
            $responses[] = ['time' => $times[$i]] + array_intersect_key(HttpClient::parse($raw[$i]), ['status' => 0, 'body' => '']);
        }

        return $responses;
    }
}
