<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Metrics;

use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

final class StatusWatchTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/metrics/app.php';

    public function testStatusWatchRedrawsTheWorkersEverySecondAndEndsWhenTheServerGoes(): void
    {
        $pidFile = sys_get_temp_dir() . '/kiln-watch-' . bin2hex(random_bytes(4)) . '.pid';
        $kiln = KilnProcess::start(self::APP, ['--workers=2', "--pid-file=$pidFile"]);
        $watch = proc_open(
            [PHP_BINARY, __DIR__ . '/../../../bin/kiln', 'status', '--watch', "--pid-file=$pidFile"],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
        );
        self::assertIsResource($watch);
        stream_set_blocking($pipes[1], false);
        $output = '';
        $deadline = microtime(true) + 10;
        while (substr_count($output, "\e[H\e[2J") < 2 && microtime(true) < $deadline) {
            $output .= (string) fread($pipes[1], 65536);
            usleep(50_000);
        }
        self::assertGreaterThanOrEqual(2, substr_count($output, "\e[H\e[2J"), $output);
        self::assertMatchesRegularExpression('~^  worker 2  pid \d+  ready  requests \d+  in flight \d+  http \d+  websockets \d+  sse \d+  memory [\d.]+M  uptime \d+s  restarts 0$~m', $output);

        self::assertSame(0, $kiln->stop());
        $deadline = microtime(true) + 10;
        while (($status = proc_get_status($watch))['running'] && microtime(true) < $deadline) {
            $output .= (string) fread($pipes[1], 65536);
            usleep(50_000);
        }
        if ($status['running']) {
            proc_terminate($watch, SIGKILL);
        }
        fclose($pipes[1]);
        proc_close($watch);
        self::assertFalse($status['running'], 'kiln status --watch ends when the server is gone');
        self::assertSame(3, $status['exitcode']);
    }
}
