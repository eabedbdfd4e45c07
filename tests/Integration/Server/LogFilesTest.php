<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

final class LogFilesTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/kiln-logs-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        $pid = (int) @file_get_contents("{$this->dir}/kiln.pid");
        if ($pid > 0) {
            KilnProcess::run(['stop', "--pid-file={$this->dir}/kiln.pid", '--timeout=5'], 10);
            @posix_kill($pid, SIGKILL);
        }
        exec('rm -rf ' . escapeshellarg($this->dir));
    }

    /**
     * With --error-log=FILE (here a daemon's, as logrotate would see it): after the file is renamed and the
     * supervisor gets USR1, the supervisor's next line and each worker's next line land in a new FILE.
     */
    public function testUsr1ReopensTheErrorLogInTheSupervisorAndEveryWorker(): void
    {
        $log = "{$this->dir}/error.log";
        [$supervisor, $port] = $this->startDaemon($log, [], 'debug');
        $clients = $this->oneConnectionPerWorker($port);

        foreach ($clients as $pid => $client) {
            self::assertSame(500, $this->get($client, "/boom?before-$pid"));
        }
        $this->waitFor($log, array_map(static fn(int $pid): string => "] Uncaught RuntimeException while handling GET /boom?before-$pid", array_keys($clients)));

        rename($log, "$log.1");
        posix_kill($supervisor, SIGUSR1);
        $this->waitFor($log, ["[info] [supervisor $supervisor] log files reopened (SIGUSR1)"]);
        // A worker acts on USR1 at its next loop tick; a request sent before that could still be logged to the old file.
        $this->waitFor($log, array_map(static fn(int $pid): string => " $pid] log files reopened", array_keys($clients)));
        foreach ($clients as $pid => $client) {
            self::assertSame(500, $this->get($client, "/boom?after-$pid"));
        }
        $this->waitFor($log, array_map(static fn(int $pid): string => " $pid] Uncaught RuntimeException while handling GET /boom?after-$pid", array_keys($clients)));

        $rotated = (string) file_get_contents("$log.1");
        self::assertStringContainsString('ready: http://', $rotated);
        self::assertStringNotContainsString('after-', $rotated, 'no worker kept writing to the rotated file');
        self::assertStringNotContainsString('log files reopened', $rotated);
        foreach ($clients as $client) {
            $client->close();
        }
    }

    /** A worker forked before the rotation and still booting when USR1 comes must not keep the old file. */
    public function testAWorkerStillBootingAtUsr1AlsoReopensTheErrorLog(): void
    {
        $log = "{$this->dir}/error.log";
        $slow = "{$this->dir}/slow-boot";
        [$supervisor, $port] = $this->startDaemon($log, ['KILN_TEST_SLOW_BOOT_FLAG' => $slow], 'debug');
        $before = array_keys($this->oneConnectionPerWorker($port));
        touch($slow);
        posix_kill($before[0], SIGKILL);
        $deadline = microtime(true) + 5;
        while (!file_exists("$slow.booting") && microtime(true) < $deadline) {
            usleep(10_000);
        }
        self::assertFileExists("$slow.booting", 'the replacement is booting');
        unlink($slow); // Only this replacement boots slowly.
        rename($log, "$log.1");
        posix_kill($supervisor, SIGUSR1);
        $this->waitFor($log, ["[supervisor $supervisor] log files reopened (SIGUSR1)"]);
        $clients = $this->oneConnectionPerWorker($port);
        $replacement = array_values(array_diff(array_keys($clients), $before));
        self::assertCount(1, $replacement, 'the killed worker was replaced');
        // The supervisor tells it to reopen once it says ready; a request now could still beat that signal.
        $this->waitFor($log, [" {$replacement[0]}] log files reopened"]);
        self::assertSame(500, $this->get($clients[$replacement[0]], '/boom?after'));
        $this->waitFor($log, [" {$replacement[0]}] Uncaught RuntimeException while handling GET /boom?after"]);
        self::assertStringNotContainsString('/boom?after', (string) file_get_contents("$log.1"));
        foreach ($clients as $client) {
            $client->close();
        }
    }

    public function testTheAccessLogHasOneCombinedLinePerRequestFlushedWithinASecondAndOnGracefulStop(): void
    {
        $access = "{$this->dir}/access.log";
        $kiln = KilnProcess::start(self::APP, ["--access-log=$access", '--workers=1']);
        $sentAt = microtime(true);
        $response = HttpClient::get($kiln->baseUrl() . '/version?x=1', [
            'Referer' => 'http://ref.example/a"b',
            'User-Agent' => 'Agent "quoted" \\ 1.0',
        ]);
        self::assertSame(200, $response['status']);
        $missing = HttpClient::get($kiln->baseUrl() . '/missing');
        $client = RawClient::to($kiln);
        for ($i = 1; $i <= 2; $i++) {
            $client->send("GET /version?keep-alive=$i HTTP/1.1\r\nHost: x\r\nUser-Agent: ka\r\n\r\n");
            self::assertSame(200, $client->readResponse()['status'] ?? 0);
        }
        $client->close();
        $lines = $this->waitForLines($access, 4, 3.0);
        self::assertLessThan(2.0, microtime(true) - $sentAt, 'flushed by the housekeeping tick (every second)');
        self::assertCount(4, $lines, 'one line per request');

        $stamp = '\[(\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})\]';
        self::assertMatchesRegularExpression('~^127\.0\.0\.1 - - ' . $stamp . ' "GET /version\?x=1 HTTP/1\.1" 200 2 '
            . preg_quote('"http://ref.example/a\"b" "Agent \"quoted\" \\\\ 1.0"', '~') . '$~', $lines[0]);
        preg_match("~$stamp~", $lines[0], $m);
        $time = \DateTimeImmutable::createFromFormat('d/M/Y:H:i:s O', $m[1]);
        self::assertNotFalse($time);
        self::assertEqualsWithDelta($sentAt, $time->getTimestamp(), 5.0, 'the time of the request');
        self::assertMatchesRegularExpression('~^127\.0\.0\.1 - - ' . $stamp . ' "GET /missing HTTP/1\.1" 404 '
            . \strlen($missing['body']) . ' "-" "-"$~', $lines[1]);
        self::assertStringContainsString('"GET /version?keep-alive=1 HTTP/1.1" 200 2 "-" "ka"', $lines[2]);
        self::assertStringContainsString('"GET /version?keep-alive=2 HTTP/1.1" 200 2 "-" "ka"', $lines[3]);

        // The last request's line is still buffered when QUIT arrives: the graceful stop writes it.
        self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/version?last')['status']);
        $kiln->signal(SIGQUIT);
        self::assertSame(0, $kiln->waitForExit(10.0), $kiln->log());
        $lines = $this->waitForLines($access, 5, 0.0);
        self::assertCount(5, $lines);
        self::assertStringContainsString('"GET /version?last HTTP/1.1" 200 2 "-" "-"', $lines[4]);
    }

    /**
     * Starts a daemon logging to $log; returns its supervisor pid and port.
     *
     * @param array<string, string> $env
     * @return array{int, int}
     */
    private function startDaemon(string $log, array $env = [], string $level = 'info'): array
    {
        [$code, , $stderr] = KilnProcess::run(['serve', self::APP, '--daemon', "--pid-file={$this->dir}/kiln.pid",
            "--error-log=$log", "--log-level=$level", '--listen=127.0.0.1:0', '--workers=2'], 15, $env);
        self::assertSame(0, $code, $stderr);
        self::assertSame(1, preg_match('~ready: http://127\.0\.0\.1:(\d+)~', (string) file_get_contents($log), $m));
        return [(int) file_get_contents("{$this->dir}/kiln.pid"), (int) $m[1]];
    }

    /** @return array<int, RawClient> a keep-alive connection to each worker, by the worker's pid */
    private function oneConnectionPerWorker(int $port): array
    {
        $clients = [];
        $deadline = microtime(true) + 5;
        while (\count($clients) < 2 && microtime(true) < $deadline) {
            $client = new RawClient('127.0.0.1', $port);
            $client->send("GET /pid HTTP/1.1\r\nHost: x\r\n\r\n");
            $pid = (int) ($client->readResponse()['body'] ?? 0);
            if ($pid > 0 && !isset($clients[$pid])) {
                $clients[$pid] = $client;
            } else {
                $client->close();
            }
        }
        self::assertCount(2, $clients, 'reached both workers');
        return $clients;
    }

    private function get(RawClient $client, string $target): int
    {
        $client->send("GET $target HTTP/1.1\r\nHost: x\r\n\r\n");
        return $client->readResponse()['status'] ?? 0;
    }

    /** @param list<string> $needles */
    private function waitFor(string $path, array $needles, float $timeout = 5.0): void
    {
        $deadline = microtime(true) + $timeout;
        while (true) {
            $text = (string) @file_get_contents($path);
            $missing = array_filter($needles, static fn(string $needle): bool => !str_contains($text, $needle));
            if ($missing === []) {
                return;
            }
            if (microtime(true) > $deadline) {
                self::fail("$path never contained " . implode(', ', $missing) . ":\n$text");
            }
            usleep(20_000);
        }
    }

    /** @return list<string> the file's lines once it has at least $count (or when $timeout is up) */
    private function waitForLines(string $path, int $count, float $timeout): array
    {
        $deadline = microtime(true) + $timeout;
        do {
            $lines = array_values(array_filter(explode("\n", (string) @file_get_contents($path))));
            if (\count($lines) >= $count) {
                break;
            }
            usleep(20_000);
        } while (microtime(true) < $deadline);
        return $lines;
    }
}
