<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

final class WorkerLifecycleTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    /**
     * A client mixes new connections with three keep-alive ones for 3 s; halfway, one worker gets SIGKILL. Only
     * the keep-alive connections that worker held may fail (once each, on their next request); every new
     * connection and every request after a reconnect succeeds, and the slot gets a new worker at once.
     */
    public function testAWorkerKilledUnderLoadIsReplacedAndOnlyItsOwnConnectionsFail(): void
    {
        $kiln = KilnProcess::start(self::APP);
        $before = $kiln->workerPids();
        /** @var list<array{RawClient, int}> $kept each keep-alive connection and the pid that last answered on it */
        $kept = [];
        for ($i = 0; $i < 3; $i++) {
            $client = RawClient::to($kiln);
            $kept[] = [$client, $this->pidOn($client) ?? self::fail('keep-alive request failed before the kill')];
        }
        $victim = null;
        $held = 0;
        $failures = [];
        $servedAfterKill = 0;
        $killAt = microtime(true) + 1.5;
        $end = microtime(true) + 3.0;
        for ($i = 0; microtime(true) < $end; $i++) {
            if ($victim === null && microtime(true) >= $killAt) {
                $victim = $kept[0][1]; // A worker that surely holds at least one of our connections.
                $held = \count(array_filter($kept, static fn(array $k): bool => $k[1] === $victim));
                posix_kill($victim, SIGKILL);
            }
            $response = HttpClient::get($kiln->baseUrl() . '/pid', [], 5);
            self::assertSame(200, $response['status'], 'a new connection never fails');
            $slot = $i % 3;
            [$client, $lastPid] = $kept[$slot];
            $pid = $this->pidOn($client);
            if ($pid === null) {
                $failures[] = $lastPid;
                $client->close();
                $client = RawClient::to($kiln);
                $pid = $this->pidOn($client) ?? self::fail('a request on a fresh connection failed after the kill');
            }
            $kept[$slot] = [$client, $pid];
            $servedAfterKill += $victim === null ? 0 : 2;
        }
        foreach ($kept as [$client]) {
            $client->close();
        }
        self::assertNotNull($victim);
        self::assertLessThanOrEqual($held, \count($failures), 'at most the connections the killed worker held fail');
        self::assertSame([], array_diff($failures, [$victim]), 'only connections of the killed worker fail');
        self::assertGreaterThan(10, $servedAfterKill);
        self::assertTrue($kiln->isRunning(), 'the supervisor stays up');
        $survivor = array_values(array_diff($before, [$victim]));
        $after = $this->waitForPids($kiln, static fn(array $pids): bool => \count($pids) === 2 && !\in_array($victim, $pids, true));
        self::assertSame($survivor, array_values(array_intersect($survivor, $after)));
        $kiln->waitForLog('~worker \d \(pid ' . $victim . '\) killed by signal 9 \(SIGKILL\); replacing it now~', 5);
        for ($i = 0; $i < 6; $i++) {
            self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/')['status']);
        }
        self::assertSame(0, $kiln->stop());
    }

    public function testAWorkerThatStartsFailingAtBootIsBackedOffWhileTheOtherServes(): void
    {
        $flag = sys_get_temp_dir() . '/kiln-test-fail-' . bin2hex(random_bytes(4));
        $kiln = KilnProcess::start(self::APP, [], ['KILN_TEST_FAIL_FLAG' => $flag]);
        touch($flag);
        try {
            $victim = $kiln->workerPids()[0];
            posix_kill($victim, SIGKILL);
            $kiln->waitForLog('~exited with code 70 \(boot failed\): RuntimeException: fixture asked to fail at boot.*before serving a request; restarting it in 0\.2 s \(failure 2 in a row\)~', 10);
            $kiln->waitForLog('~failure 3 in a row~', 10);
            self::assertTrue($kiln->isRunning());
            for ($i = 0; $i < 4; $i++) {
                self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/')['status']);
            }
        } finally {
            @unlink($flag);
        }
        // Healed: the next attempt boots and the slot serves again.
        $this->waitForPids($kiln, static fn(array $pids): bool => \count($pids) === 2);
        self::assertSame(0, $kiln->stop());
    }

    public function testAWorkerIsRecycledAfterMaxRequestsWithoutFailingARequest(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--max-requests=5']);
        $before = $kiln->workerPids();
        for ($i = 0; $i < 20; $i++) {
            self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/')['status'], "request $i");
        }
        $kiln->waitForLog('~will be replaced: served 5 requests \(--max-requests=5\)~', 5);
        $after = $this->waitForPids($kiln, static fn(array $pids): bool => \count($pids) === 2 && array_diff($pids, $before) !== []);
        self::assertNotSame($before, $after);
        self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/')['status']);
        self::assertSame(0, $kiln->stop());
    }

    /**
     * A client that keeps its connection and sends its next request as soon as it has an answer must never find
     * the connection closed under it when the worker is replaced: the worker's last response says
     * `Connection: close`. The client here sends its next request only after the old worker has exited, which
     * is when a connection the drain closed would fail it.
     */
    public function testTheLastResponseOfAWorkerAtMaxRequestsClosesItsConnection(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--workers=1', '--max-requests=3', '--log-level=debug']);
        $client = RawClient::to($kiln);
        $pids = [];
        for ($i = 1; $i <= 9; $i++) {
            $client->send("GET /pid HTTP/1.1\r\nHost: kiln.test\r\n\r\n");
            $response = $client->readResponse();
            self::assertNotNull($response, "request $i got no answer: the connection was closed under it\n" . $kiln->log());
            self::assertSame(200, $response['status']);
            $pid = $response['body'];
            $pids[$pid] = true;
            $closes = strtolower($response['headers']['connection'][0] ?? '') === 'close';
            if ($i % 3 !== 0) {
                self::assertFalse($closes, "response $i keeps the connection");
                continue;
            }
            self::assertTrue($closes, "response $i, the worker's third and last, closes the connection");
            $kiln->waitForLog('~worker 1 \(pid ' . $pid . '\) exited with code 0~', 10);
            self::assertTrue($client->isClosedWithin(5));
            $client = RawClient::to($kiln);
        }
        self::assertCount(3, $pids, 'each worker served three requests');
        self::assertSame(0, $kiln->stop());
    }

    public function testAWorkerAboveMaxMemoryIsReplacedGracefullyAndTheLogSaysWhy(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--workers=1', '--max-memory=48M', '--log-level=debug']);
        [$first] = $kiln->workerPids();
        $calls = 0;
        // Each call keeps 4 MiB more; the worker reports the memory after each request.
        while (!str_contains($kiln->log(), 'will be replaced') && $calls < 40) {
            $response = HttpClient::get($kiln->baseUrl() . '/grow');
            self::assertSame(200, $response['status'], "call $calls");
            $calls++;
        }
        self::assertGreaterThanOrEqual(10, $calls, 'not replaced before the limit (48 MiB is 12 calls of 4 MiB)');
        $line = $kiln->waitForLog('~worker 1 \(pid ' . $first . '\) will be replaced: memory \d+ bytes is above --max-memory=50331648~', 5);
        preg_match('~memory (\d+) bytes~', $line, $m);
        self::assertGreaterThan(48 << 20, (int) $m[1]);
        // Requests go on while the replacement boots: the old worker serves until the new one is ready.
        $deadline = microtime(true) + 10;
        while (true) {
            $response = HttpClient::get($kiln->baseUrl() . '/pid');
            self::assertSame(200, $response['status'], 'no request fails during the handover');
            if ($response['body'] !== (string) $first || microtime(true) > $deadline) {
                break;
            }
            usleep(20_000);
        }
        self::assertNotSame((string) $first, $response['body'], 'a new worker serves');
        $after = $this->waitForPids($kiln, static fn(array $pids): bool => \count($pids) === 1 && $pids[0] !== $first);
        self::assertNotContains($first, $after);
        $kiln->waitForLog('~worker 1 \(pid ' . $first . '\) is stopping: drain requested~', 5);
        $kiln->waitForLog('~worker 1 \(pid ' . $first . '\) exited with code 0~', 5);
        self::assertSame(0, $kiln->stop());
    }

    public function testUsr1ReopensTheAccessLogAfterRotation(): void
    {
        $access = sys_get_temp_dir() . '/kiln-test-access-' . bin2hex(random_bytes(4)) . '.log';
        $kiln = KilnProcess::start(self::APP, ["--access-log=$access", '--log-level=debug']);
        try {
            HttpClient::get($kiln->baseUrl() . '/?before');
            $this->waitForFile($access, 'GET /?before');
            rename($access, "$access.1");
            $kiln->signal(SIGUSR1);
            $kiln->waitForLog('~log files reopened \(SIGUSR1\)~', 5);
            // Workers reopen on their next loop tick: a request before that may still be logged to the old file.
            foreach ($kiln->workerPids() as $pid) {
                $kiln->waitForLog("~\\[worker \\d $pid\\] log files reopened~", 5);
            }
            $deadline = microtime(true) + 5;
            do {
                HttpClient::get($kiln->baseUrl() . '/?after');
                usleep(100_000);
            } while (!str_contains((string) @file_get_contents($access), 'GET /?after') && microtime(true) < $deadline);
            $this->waitForFile($access, 'GET /?after');
            self::assertStringNotContainsString('GET /?after', (string) file_get_contents("$access.1"));
        } finally {
            self::assertSame(0, $kiln->stop());
            @unlink($access);
            @unlink("$access.1");
        }
    }

    /** One keep-alive GET /pid; the answering worker's pid, or null when the connection turned out dead. */
    private function pidOn(RawClient $client): ?int
    {
        if (!$client->trySend("GET /pid HTTP/1.1\r\nHost: x\r\n\r\n")) {
            return null;
        }
        try {
            $response = $client->readResponse(5.0);
        } catch (\RuntimeException) {
            return null; // Reset mid-response.
        }
        if ($response === null) {
            return null;
        }
        self::assertSame(200, $response['status']);
        return (int) $response['body'];
    }

    /**
     * @param \Closure(list<int>): bool $condition
     * @return list<int>
     */
    private function waitForPids(KilnProcess $kiln, \Closure $condition, float $timeout = 10.0): array
    {
        $deadline = microtime(true) + $timeout;
        while (!$condition($pids = $kiln->workerPids())) {
            if (microtime(true) > $deadline) {
                self::fail('worker pids never matched; now ' . implode(',', $pids) . "\n" . $kiln->log());
            }
            usleep(20_000);
        }
        return $pids;
    }

    private function waitForFile(string $path, string $needle, float $timeout = 5.0): void
    {
        $deadline = microtime(true) + $timeout;
        while (!str_contains((string) @file_get_contents($path), $needle)) {
            if (microtime(true) > $deadline) {
                self::fail("$path never contained $needle");
            }
            usleep(50_000);
        }
    }
}
