<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

final class WorkerLifecycleTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    public function testAKilledWorkerIsReplacedAndTheServerKeepsAnswering(): void
    {
        $kiln = KilnProcess::start(self::APP);
        $before = $kiln->workerPids();
        posix_kill($before[0], SIGKILL);
        $after = $this->waitForPids($kiln, static fn(array $pids): bool => \count($pids) === 2 && !\in_array($before[0], $pids, true));
        self::assertContains($before[1], $after);
        $kiln->waitForLog('~worker \d \(pid ' . $before[0] . '\) killed by signal 9 \(SIGKILL\)~', 5);
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

    public function testUsr1ReopensTheAccessLogAfterRotation(): void
    {
        $access = sys_get_temp_dir() . '/kiln-test-access-' . bin2hex(random_bytes(4)) . '.log';
        $kiln = KilnProcess::start(self::APP, ["--access-log=$access"]);
        try {
            HttpClient::get($kiln->baseUrl() . '/?before');
            $this->waitForFile($access, 'GET /?before');
            rename($access, "$access.1");
            $kiln->signal(SIGUSR1);
            $kiln->waitForLog('~log files reopened~', 5);
            // Workers reopen on their next loop tick; keep asking until a line lands in the new file.
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
