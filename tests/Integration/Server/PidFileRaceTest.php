<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/** Several `kiln serve` started at the same moment with one --pid-file: exactly one serves; and none beside what is left of a killed one. */
final class PidFileRaceTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    private const RACERS = 4;

    private string $pidFile;

    /** @var list<array{resource, string}> process, stderr file */
    private array $racers = [];

    protected function setUp(): void
    {
        $this->pidFile = sys_get_temp_dir() . '/kiln-test-race-' . bin2hex(random_bytes(4)) . '.pid';
    }

    protected function tearDown(): void
    {
        foreach ($this->racers as [$process, $log]) {
            $status = proc_get_status($process);
            if ($status['running']) {
                posix_kill($status['pid'], SIGTERM);
                $deadline = microtime(true) + 5.0;
                while (proc_get_status($process)['running'] && microtime(true) < $deadline) {
                    usleep(20_000);
                }
                proc_get_status($process)['running'] && posix_kill($status['pid'], SIGKILL);
            }
            proc_close($process);
            @unlink($log);
        }
        @unlink($this->pidFile);
    }

    /**
     * The error log is a named pipe: opening it, after the pid file is taken and before the pid is written, waits
     * for a reader. A racer that got past the pid file waits there; the others must have been refused already,
     * at the pid file (without a lock they would all pass the look at the file and wait there together).
     */
    public function testOfServersRacingForOnePidFileOneGetsItAndTheOthersExitAtOnceSayingItIsHeld(): void
    {
        $fifo = $this->pidFile . '.log';
        self::assertTrue(posix_mkfifo($fifo, 0600));
        for ($i = 0; $i < self::RACERS; $i++) {
            $err = (string) tempnam(sys_get_temp_dir(), 'kiln-test-race-err-');
            $process = proc_open(
                [PHP_BINARY, \dirname(__DIR__, 3) . '/bin/kiln', 'serve', self::APP, '--listen=127.0.0.1:0', '--workers=1', "--pid-file=$this->pidFile", "--error-log=$fifo"],
                [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', $err, 'w']],
                $pipes,
            );
            self::assertNotFalse($process);
            $this->racers[] = [$process, $err];
        }
        $reader = null;
        try {
            // Each racer either exits or waits to open the pipe (the kernel names that wait wait_for_partner).
            $waiting = $exited = [];
            $this->waitUntil(function () use (&$waiting, &$exited): bool {
                $waiting = $exited = [];
                foreach ($this->racers as [$process, $err]) {
                    $status = proc_get_status($process);
                    if (!$status['running']) {
                        $exited[] = (string) file_get_contents($err);
                    } elseif (str_contains((string) @file_get_contents("/proc/{$status['pid']}/wchan"), 'partner')) {
                        $waiting[] = $status['pid'];
                    }
                }
                return \count($waiting) + \count($exited) === self::RACERS;
            }, 'every racer waiting at the error log or gone');
            self::assertCount(1, $waiting, 'one racer got past the pid file; exits: ' . implode("\n", $exited));
            self::assertCount(self::RACERS - 1, $exited);
            foreach ($exited as $text) {
                self::assertMatchesRegularExpression("~^kiln: Pid file \\Q{$this->pidFile}\\E is held by (running process \\d+|another `kiln serve` that is starting)~", $text);
            }
            $reader = fopen($fifo, 'r');
            self::assertNotFalse($reader);
            stream_set_blocking($reader, false);
            $log = '';
            $this->waitUntil(static function () use ($reader, &$log): bool {
                $log .= (string) fread($reader, 65536);
                return str_contains($log, 'ready: http://');
            }, 'the one that got the pid file to serve');
        } finally {
            \is_resource($reader) && fclose($reader);
            @unlink($fifo);
        }
        self::assertSame((string) $waiting[0], trim((string) file_get_contents($this->pidFile)), 'the file names the one that serves');
        [$code, $stdout] = KilnProcess::run(['status', "--pid-file=$this->pidFile"]);
        self::assertSame(0, $code, $stdout);
        self::assertStringContainsString("supervisor pid {$waiting[0]} ", $stdout);
    }

    public function testThePidFileOfAKilledSupervisorIsNotTakenWhileItsWorkerStillServesAndIsOnceItIsGone(): void
    {
        $old = KilnProcess::start(__DIR__ . '/../../Fixtures/hygiene/app.php', ['--workers=1', '--log-level=debug', "--pid-file=$this->pidFile"]);
        try {
            $client = RawClient::to($old);
            $client->send("GET /isolated/sleep.php?ms=8000 HTTP/1.1\r\nHost: test\r\n\r\n");
            $this->waitUntil(static fn(): bool => str_contains($old->log(), 'is up on'), 'the php-cgi pool up');
            $worker = $old->workerPids();
            posix_kill($old->pid(), SIGKILL);
            self::assertNotNull($old->waitForExit(5.0), 'the supervisor is gone after SIGKILL');
            [$code, , $stderr] = KilnProcess::run(['serve', self::APP, '--listen=127.0.0.1:0', '--workers=1', "--pid-file=$this->pidFile"], 6.0);
            self::assertSame(1, $code, "refused while the old worker still serves: $stderr");
            self::assertStringContainsString("Pid file {$this->pidFile} is held by another server: one that is starting, or what is left of supervisor {$old->pid()}, which is gone", $stderr);
            self::assertSame(200, $client->readResponse(15.0)['status'] ?? 0, 'the old worker answers its request');
            $this->waitUntil(static fn(): bool => array_filter($worker, static fn(int $pid): bool => file_exists("/proc/$pid/stat") && !str_contains((string) file_get_contents("/proc/$pid/stat"), ') Z ')) === [], 'the old processes to exit');
            $new = KilnProcess::start(self::APP, ['--workers=1', "--pid-file=$this->pidFile"]);
            self::assertStringContainsString("replacing the stale pid file {$this->pidFile} (process {$old->pid()} is gone)", $new->log());
            self::assertSame((string) $new->pid(), trim((string) file_get_contents($this->pidFile)));
            self::assertSame(0, $new->stop());
        } finally {
            $old->stop(1.0);
        }
    }

    /** @param \Closure(): bool $condition */
    private function waitUntil(\Closure $condition, string $what, float $timeout = 20.0): void
    {
        $deadline = microtime(true) + $timeout;
        while (!$condition()) {
            if (microtime(true) > $deadline) {
                self::fail("timed out after $timeout s waiting for: $what");
            }
            usleep(20_000);
        }
    }
}
