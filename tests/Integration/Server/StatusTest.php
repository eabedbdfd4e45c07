<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

final class StatusTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    public function testStatusListsTheWorkersOfAForegroundServerWithTheirPidsAndRequestCounts(): void
    {
        $pidFile = sys_get_temp_dir() . '/kiln-test-' . bin2hex(random_bytes(4)) . '.pid';
        $kiln = KilnProcess::start(self::APP, ["--pid-file=$pidFile", '--workers=2']);
        for ($i = 0; $i < 7; $i++) {
            self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/')['status']);
        }
        // Workers report their counts every second and the supervisor rewrites the status every second.
        $deadline = microtime(true) + 10;
        while (true) {
            [$code, $stdout, $stderr] = KilnProcess::run(['status', "--pid-file=$pidFile"]);
            self::assertSame(0, $code, $stderr);
            preg_match_all('~^  worker (\d+)  pid (\d+)  (\w+)  requests (\d+)  in flight \d+  http \d+  websockets \d+  sse \d+  memory [\d.]+M  uptime \d+s  restarts \d+$~m', $stdout, $m);
            if (array_sum(array_map('intval', $m[4])) === 7 || microtime(true) > $deadline) {
                break;
            }
            usleep(100_000);
        }
        self::assertStringStartsWith("kiln running: supervisor pid {$kiln->pid()} {$kiln->baseUrl()}\n", $stdout);
        self::assertSame(['1', '2'], $m[1], $stdout);
        $pids = array_map('intval', $m[2]);
        sort($pids);
        self::assertSame($kiln->workerPids(), $pids);
        self::assertSame(['ready', 'ready'], $m[3]);
        self::assertSame(7, array_sum(array_map('intval', $m[4])), $stdout);

        [$code, $json] = KilnProcess::run(['status', '--json', "--pid-file=$pidFile"]);
        self::assertSame(0, $code);
        $status = json_decode($json, true);
        self::assertIsArray($status);
        self::assertSame($kiln->pid(), $status['pid']);
        self::assertIsArray($status['workers']);
        self::assertSame(7, array_sum(array_column($status['workers'], 'requests')));

        self::assertSame(0, $kiln->stop());
        [$code] = KilnProcess::run(['status', "--pid-file=$pidFile"]);
        self::assertSame(3, $code, 'not running');
    }
}
