<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** --stall-timeout: a handler that blocks its worker's event loop is reported with its stack, then the worker is replaced. */
final class StalledWorkerTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/stalls.php';

    private string $pidFile = '';

    protected function tearDown(): void
    {
        if ($this->pidFile !== '') {
            @unlink($this->pidFile);
        }
    }

    public function testAWorkerSpinningInAHandlerIsReportedWithTheRequestAndTheRoutesFrameShownAsStalledThenReplaced(): void
    {
        $kiln = $this->start(2.0);
        $pid = (int) HttpClient::get($kiln->baseUrl() . '/pid')['body'];
        $spinning = $this->send($kiln, '/spin');

        $kiln->waitForLog('~\[warning\] \[supervisor \d+\] worker 1 \(pid ' . $pid . '\): its event loop has stood still for [\d.]+ s \(--stall-timeout=2\)~', 10);
        $report = $kiln->waitForLog('~\[warning\] \[worker 1 ' . $pid . '\] event loop stalled, in flight: GET /spin \| holding the loop at ~', 10);
        self::assertMatchesRegularExpression('~holding the loop at ' . preg_quote((string) realpath(self::APP), '~') . '\(1[01]\)~', $report);
        self::assertStringContainsString('App->handle()', $report, 'the calls that led there');
        self::assertSame($pid, $this->stalledInStatus(10), 'kiln status --json shows it stalled');
        [, $status] = KilnProcess::run(['status', "--pid-file={$this->pidFile}"]);
        self::assertMatchesRegularExpression('~worker 1  pid ' . $pid . '  stalled \d+s  requests \d+  in flight unknown \(stalled\)  http~', $status, 'not the count from before the stall');

        $kiln->waitForLog('~worker 1 \(pid ' . $pid . '\): its event loop has stood still for [\d.]+ s \(twice --stall-timeout=2\): killing it \(SIGKILL\)~', 10);
        self::assertSame('', $this->readUntilClosed($spinning), 'the stuck request fails: its connection closes');
        self::assertNotSame($pid, $this->servingPid($kiln), 'replaced');
        self::assertSame(0, $kiln->stop());
    }

    public function testAWorkerBlockedInSleepIsReportedAndReplacedAndTheRestartIsCountedAsAStall(): void
    {
        $kiln = $this->start(1.0, [], ['--admin-listen=127.0.0.1:0']);
        $admin = (string) preg_replace('~^.*admin listener on (http://\S+).*$~', '$1', $kiln->waitForLog('~admin listener on http://~'));
        $pid = (int) HttpClient::get($kiln->baseUrl() . '/pid')['body'];
        $sleeping = $this->send($kiln, '/sleep');
        $report = $kiln->waitForLog('~\[worker 1 ' . $pid . '\] event loop stalled, in flight: GET /sleep~', 10);
        self::assertMatchesRegularExpression('~holding the loop at ' . preg_quote((string) realpath(self::APP), '~') . '\(1[56]\)~', $report, 'the sleep, or the loop around it');
        $kiln->waitForLog('~worker 1 \(pid ' . $pid . '\) killed by signal 9 \(SIGKILL\) for standing still \(--stall-timeout\); replacing it now~', 10);
        self::assertSame('', $this->readUntilClosed($sleeping));
        self::assertNotSame($pid, $this->servingPid($kiln));
        self::assertContains('kiln_worker_restarts_total{reason="stall"} 1', explode("\n", HttpClient::get($admin . '/metrics')['body']));
        self::assertSame(0, $kiln->stop());
    }

    public function testASleepCutShortByTheReportLetsTheHandlerAnswerAndTheWorkerIsKept(): void
    {
        $kiln = $this->start(1.0);
        $pid = (int) HttpClient::get($kiln->baseUrl() . '/pid')['body'];
        $response = HttpClient::get($kiln->baseUrl() . '/nap', [], 15);
        self::assertSame([200, 'woke'], [$response['status'], $response['body']]);
        $kiln->waitForLog('~worker 1 \(pid ' . $pid . '\): its event loop turned again after standing still for [\d.]+ s~', 10);
        self::assertSame($pid, (int) HttpClient::get($kiln->baseUrl() . '/pid')['body'], 'the same worker serves on');
        self::assertStringNotContainsString('killing it', $kiln->log());
        self::assertSame(0, $kiln->stop());
    }

    public function testAHandlerThatWaitsWithoutBlockingTheLoopIsNotReported(): void
    {
        // A 2 s timeout and a 5 s wait: a heartbeat late by a second on a busy machine is not a stall.
        $kiln = $this->start(2.0, ['KILN_TEST_WAIT' => '5']);
        $pid = (int) HttpClient::get($kiln->baseUrl() . '/pid')['body'];
        $waiting = $this->send($kiln, '/wait');
        // While it waits, the same worker answers others at once.
        self::assertSame($pid, (int) HttpClient::get($kiln->baseUrl() . '/pid', [], 2)['body']);
        $answer = $this->readUntilClosed($waiting);
        self::assertStringStartsWith('HTTP/1.1 200', $answer);
        self::assertStringEndsWith('waited', $answer);
        self::assertSame($pid, (int) HttpClient::get($kiln->baseUrl() . '/pid')['body']);
        self::assertDoesNotMatchRegularExpression('~stood still|stalled~', $kiln->log());
        self::assertSame(0, $kiln->stop());
    }

    /**
     * @param array<string, string> $env
     * @param list<string> $args
     */
    private function start(float $stallTimeout, array $env = [], array $args = []): KilnProcess
    {
        $this->pidFile = sys_get_temp_dir() . '/kiln-stall-' . bin2hex(random_bytes(4)) . '.pid';
        return KilnProcess::start(self::APP, ['--workers=1', "--stall-timeout=$stallTimeout", "--pid-file={$this->pidFile}", ...$args], $env);
    }

    /** @return resource a connection with the request sent (Connection: close) */
    private function send(KilnProcess $kiln, string $path): mixed
    {
        $socket = stream_socket_client("tcp://{$kiln->host()}:{$kiln->port()}", $errno, $error, 5);
        self::assertNotFalse($socket, (string) $error);
        fwrite($socket, "GET $path HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        return $socket;
    }

    /** @param resource $socket */
    private function readUntilClosed(mixed $socket, float $timeout = 15.0): string
    {
        stream_set_timeout($socket, (int) $timeout);
        $data = '';
        $deadline = microtime(true) + $timeout;
        while (!feof($socket) && microtime(true) < $deadline) {
            $data .= (string) fread($socket, 65536);
        }
        self::assertTrue(feof($socket), 'the connection closed in time');
        fclose($socket);
        return $data;
    }

    /** The pid of the worker kiln status shows as stalled (its JSON, beside the pid file), waiting up to $timeout. */
    private function stalledInStatus(float $timeout): ?int
    {
        $file = (string) preg_replace('/\.pid$/', '', $this->pidFile) . '.status.json';
        $deadline = microtime(true) + $timeout;
        do {
            $status = json_decode((string) @file_get_contents($file), true);
            foreach (\is_array($status) && \is_array($status['workers'] ?? null) ? $status['workers'] : [] as $worker) {
                if (\is_array($worker) && ($worker['stalled'] ?? 0) > 0) {
                    return \is_int($worker['pid'] ?? null) ? $worker['pid'] : null;
                }
            }
            usleep(50_000);
        } while (microtime(true) < $deadline);
        return null;
    }

    /** The pid a fresh /pid answers with, once a worker answers with 200 (waits for the replacement). */
    private function servingPid(KilnProcess $kiln): int
    {
        $deadline = microtime(true) + 15;
        while (true) {
            try {
                $response = HttpClient::get($kiln->baseUrl() . '/pid', [], 2);
                if ($response['status'] === 200) {
                    return (int) $response['body'];
                }
            } catch (\RuntimeException $e) {
                if (microtime(true) > $deadline) {
                    throw $e;
                }
            }
            self::assertLessThan($deadline, microtime(true), 'a worker answers again');
            usleep(50_000);
        }
    }
}
