<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

final class CrashLoopTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/exits-at-boot.php';

    private const EXIT_LINE = '~^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z\] \[error\] \[supervisor \d+\] worker \d \(pid \d+\) '
        . 'exited with code 3 before serving a request; restarting it in ([\d.]+) s \(failure (\d+) in a row\)$~m';

    public function testAWorkerThatExitsAtBootIsRestartedLessAndLessOftenAndComesBackWhenHealed(): void
    {
        $flag = sys_get_temp_dir() . '/kiln-test-exit-' . bin2hex(random_bytes(4));
        $kiln = KilnProcess::start(self::APP, [], ['KILN_TEST_EXIT_FLAG' => $flag]);
        $pids = $kiln->workerPids();
        touch($flag);
        try {
            [$victim, $survivor] = $pids;
            posix_kill($victim, SIGKILL);
            $kiln->waitForLog('~worker \d \(pid ' . $victim . '\) killed by signal 9~', 5);
            // For 3 s the slot crash-loops; the other worker serves throughout.
            $end = microtime(true) + 3.0;
            while (microtime(true) < $end) {
                self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/')['status']);
                usleep(50_000);
            }
            self::assertTrue($kiln->isRunning(), 'the supervisor stays up');
            self::assertContains($survivor, $kiln->workerPids());
            preg_match_all(self::EXIT_LINE, $kiln->log(), $m, PREG_SET_ORDER);
            self::assertGreaterThanOrEqual(3, \count($m), $kiln->log());
            self::assertLessThanOrEqual(8, \count($m), 'backed off, not restarted in a tight loop');
            $delays = array_map(static fn(array $line): float => (float) $line[2], $m);
            $failures = array_map(static fn(array $line): int => (int) $line[3], $m);
            self::assertSame(range($failures[0], $failures[0] + \count($m) - 1), $failures, 'one attempt per logged failure');
            for ($i = 1; $i < \count($delays); $i++) {
                self::assertGreaterThan($delays[$i - 1], $delays[$i], 'each restart waits longer');
            }
            $times = array_map(static fn(array $line): float => (float) (new \DateTimeImmutable($line[1] . 'Z'))->format('U.u'), $m);
            // Each attempt came no sooner than the delay logged before it (load can only make the gaps longer).
            for ($i = 1; $i < \count($times); $i++) {
                self::assertGreaterThanOrEqual(0.9 * $delays[$i - 1], $times[$i] - $times[$i - 1], "attempt $i waited its delay");
            }
        } finally {
            @unlink($flag);
        }
        // Healed: the next attempt boots, and the slot serves again.
        $deadline = microtime(true) + 15;
        while (true) {
            $response = HttpClient::get($kiln->baseUrl() . '/pid');
            self::assertSame(200, $response['status']);
            if ((int) $response['body'] !== $survivor || microtime(true) > $deadline) {
                break;
            }
            usleep(50_000);
        }
        $served = (int) $response['body'];
        self::assertNotSame($survivor, $served, 'the healed slot serves');
        self::assertCount(2, $kiln->workerPids());
        self::assertSame(0, $kiln->stop());
    }
}
