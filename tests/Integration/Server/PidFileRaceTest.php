<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** Several `kiln serve` started at the same moment with one --pid-file: exactly one serves. */
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
