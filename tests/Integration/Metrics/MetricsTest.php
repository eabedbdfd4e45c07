<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Metrics;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

final class MetricsTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/metrics/app.php';

    public function testAKnownMixOfRequestsOnTwoWorkersIsCountedExactlyInMetricsAccessLogAndStatus(): void
    {
        $dir = sys_get_temp_dir() . '/kiln-metrics-' . bin2hex(random_bytes(4));
        mkdir($dir);
        $kiln = KilnProcess::start(self::APP, ['--workers=2', '--admin-listen=127.0.0.1:0', "--pid-file=$dir/kiln.pid",
            "--access-log=$dir/access.log", '--access-log-format=json']);
        $admin = self::adminUrl($kiln);
        $mix = [['GET', '/hello', 5, 200], ['GET', '/nope', 3, 404], ['GET', '/boom', 2, 500],
            ['POST', '/order/book', 4, 200], ['POST', '/order/pen', 1, 200]];
        foreach ($mix as [$method, $path, $times, $status]) {
            for ($i = 0; $i < $times; $i++) {
                self::assertSame($status, self::request($kiln, $method, $path), "$method $path");
            }
        }
        self::assertSame(414, self::request($kiln, 'GET', '/' . str_repeat('a', 9000)));

        $expected = [
            'kiln_http_requests_total{code="2xx",method="GET",tier="app"} 5',
            'kiln_http_requests_total{code="4xx",method="GET",tier="app"} 3',
            'kiln_http_requests_total{code="5xx",method="GET",tier="app"} 2',
            'kiln_http_requests_total{code="2xx",method="POST",tier="app"} 5',
            'kiln_http_request_duration_seconds_count{tier="app"} 15',
            'kiln_http_request_duration_seconds_bucket{tier="app",le="+Inf"} 15',
            'kiln_http_rejections_total{code="414",reason="uri_too_long"} 1',
            'shop_orders_total{kind="book"} 4',
            'shop_orders_total{kind="pen"} 1',
            'kiln_workers{state="ready"} 2',
        ];
        $text = self::waitForMetrics($admin, $expected);
        foreach ($expected as $line) {
            self::assertContains($line, explode("\n", $text), $text);
        }
        self::assertSame(1, preg_match_all('/^# TYPE shop_orders_total counter$/m', $text), 'the app metric is one family');
        self::assertMatchesRegularExpression('/^kiln_build_info\{version="[^"]+",php_version="' . preg_quote(PHP_VERSION, '/') . '"\} 1$/m', $text);
        self::assertSame(2, preg_match_all('/^kiln_worker_memory_bytes\{worker="[12]"\} \d+$/m', $text), $text);
        self::assertPromtoolAccepts($text);

        // kiln status --json agrees with the metrics (the status file is rewritten every second).
        $deadline = microtime(true) + 10;
        while (true) {
            [$code, $json] = KilnProcess::run(['status', '--json', "--pid-file=$dir/kiln.pid"]);
            $status = json_decode($json, true);
            $served = \is_array($status) && \is_array($status['workers'] ?? null) ? array_sum(array_column($status['workers'], 'requests')) : -1;
            if ($served === 15 || microtime(true) > $deadline) {
                break;
            }
            usleep(100_000);
        }
        self::assertSame(0, $code);
        self::assertSame(15, $served, $json);

        // The JSON access log: one object per line, every field.
        $deadline = microtime(true) + 10;
        while (substr_count((string) @file_get_contents("$dir/access.log"), "\n") < 16 && microtime(true) < $deadline) {
            usleep(100_000);
        }
        $lines = array_values(array_filter(explode("\n", (string) file_get_contents("$dir/access.log"))));
        self::assertCount(16, $lines);
        $paths = [];
        foreach ($lines as $line) {
            $entry = json_decode($line, true, 4, JSON_THROW_ON_ERROR);
            self::assertIsArray($entry);
            self::assertSame(['time', 'method', 'path', 'status', 'bytes', 'duration', 'client', 'request_id', 'tier', 'worker'], array_keys($entry), $line);
            self::assertIsString($entry['time']);
            self::assertMatchesRegularExpression('/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/', $entry['time']);
            self::assertIsInt($entry['status']);
            self::assertIsInt($entry['bytes']);
            self::assertIsFloat($entry['duration']);
            self::assertSame('127.0.0.1', $entry['client']);
            self::assertContains($entry['worker'], [1, 2]);
            if ($entry['status'] !== 414) {
                self::assertNotSame('', $entry['request_id'], $line);
                self::assertSame('app', $entry['tier']);
            }
            self::assertIsString($entry['method']);
            self::assertIsString($entry['path']);
            $paths[] = $entry['method'] . ' ' . $entry['path'];
        }
        self::assertSame(5, \count(array_keys($paths, 'GET /hello', true)));
        self::assertSame(4, \count(array_keys($paths, 'POST /order/book', true)));

        self::assertSame(0, $kiln->stop());
        array_map('unlink', glob("$dir/*") ?: []);
        rmdir($dir);
    }

    public function testReadyTurnsFalseDuringADrainWhileHealthAnswers(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--workers=2', '--admin-listen=127.0.0.1:0', '--drain-timeout=10']);
        $admin = self::adminUrl($kiln);
        self::assertSame(200, HttpClient::get("$admin/ready")['status']);
        self::assertSame(200, HttpClient::get("$admin/health")['status']);
        self::assertSame(404, HttpClient::get("$admin/other")['status']);
        $slow = stream_socket_client("tcp://127.0.0.1:{$kiln->port()}", $errno, $error, 5);
        self::assertNotFalse($slow, (string) $error);
        fwrite($slow, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
        usleep(300_000); // the request reaches a worker before the drain starts
        $kiln->signal(SIGQUIT);
        $quit = microtime(true);
        $deadline = microtime(true) + 5;
        $ready = HttpClient::get("$admin/ready");
        while ($ready['status'] === 200 && microtime(true) < $deadline) {
            usleep(50_000);
            $ready = HttpClient::get("$admin/ready");
        }
        [$status, $body] = [$ready['status'], $ready['body']];
        self::assertSame(503, $status);
        self::assertStringContainsString('not running', $body);
        stream_set_timeout($slow, 10);
        self::assertStringContainsString('slow done', (string) stream_get_contents($slow));
        fclose($slow);
        self::assertSame(0, $kiln->waitForExit(10.0), 'the server exits once its drain is over: ' . $kiln->log());
        // /slow takes 3 s: the drain ends with it, well before its deadline (--drain-timeout=10), when workers are killed.
        self::assertLessThan(8.0, microtime(true) - $quit, 'the drain lasted until its deadline: ' . $kiln->log());
    }

    public function testCountersKeepTheirTotalsAcrossAReloadAndTheRestartsAreCounted(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--workers=2', '--admin-listen=127.0.0.1:0']);
        $admin = self::adminUrl($kiln);
        for ($i = 0; $i < 3; $i++) {
            self::assertSame(200, self::request($kiln, 'GET', '/hello'));
        }
        $served = 'kiln_http_requests_total{code="2xx",method="GET",tier="app"} 3';
        self::waitForMetrics($admin, [$served]);
        $kiln->signal(SIGHUP);
        $text = self::waitForMetrics($admin, ['kiln_worker_restarts_total{reason="reload"} 2', 'kiln_workers{state="ready"} 2']);
        self::assertContains('kiln_worker_restarts_total{reason="reload"} 2', explode("\n", $text), $text);
        self::assertContains($served, explode("\n", $text), 'the old workers\' requests stay counted');
        self::assertContains('kiln_worker_restarts_total{reason="crash"} 0', explode("\n", $text));
        self::assertSame(0, $kiln->stop());
    }

    public function testAnExportLargerThanTheWorkersChannelTakesAtOnceArrivesWhole(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--workers=1', '--admin-listen=127.0.0.1:0']);
        $admin = self::adminUrl($kiln);
        self::assertSame(200, self::request($kiln, 'GET', '/many'));
        self::assertSame(200, self::request($kiln, 'GET', '/hello'));
        $last = 'shop_wide_total{item="item-05999-' . str_repeat('x', 60) . '"} 1';
        $text = self::waitForMetrics($admin, [$last, 'kiln_http_requests_total{code="2xx",method="GET",tier="app"} 2']);
        self::assertSame(6000, preg_match_all('/^shop_wide_total\{/m', $text));
        self::assertContains('kiln_http_requests_total{code="2xx",method="GET",tier="app"} 2', explode("\n", $text));
        self::assertSame(0, $kiln->stop());
    }

    public function testASlowRequestIsLoggedAsAWarningInTheJsonErrorLog(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--workers=1', '--slow-request=1', '--error-log-format=json']);
        self::assertSame(200, self::request($kiln, 'GET', '/hello'));
        self::assertSame(200, self::request($kiln, 'GET', '/slow'));
        self::assertSame(0, $kiln->stop());
        $log = $kiln->log();
        $entries = [];
        foreach (array_filter(explode("\n", $log)) as $line) {
            $entry = json_decode($line, true, 4, JSON_THROW_ON_ERROR);
            self::assertIsArray($entry);
            self::assertSame(['time', 'level', 'source', 'pid', 'message'], array_keys($entry), $line);
            self::assertIsString($entry['message']);
            $entries[] = ['level' => $entry['level'], 'source' => $entry['source'], 'message' => $entry['message']];
        }
        $slow = array_values(array_filter($entries, static fn(array $e): bool => str_starts_with($e['message'], 'slow request:')));
        self::assertCount(1, $slow, $log);
        self::assertSame('warning', $slow[0]['level']);
        self::assertSame('worker 1', $slow[0]['source']);
        self::assertMatchesRegularExpression('~^slow request: GET /slow answered 200 in [3-9]\.\d{3} s~', $slow[0]['message']);
    }

    public function testTheAdminListenerIsRefusedOnThePublicAddressAndOffLoopbackUnlessAsked(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', self::APP, '--listen=127.0.0.1:18471', '--admin-listen=0.0.0.0:18471']);
        self::assertSame(2, $code, $stderr);
        self::assertStringContainsString("public listener's address", $stderr);
        [$code, , $stderr] = KilnProcess::run(['serve', self::APP, '--listen=127.0.0.1:18471', '--admin-listen=0.0.0.0:19180']);
        self::assertSame(2, $code, $stderr);
        self::assertStringContainsString('--admin-public', $stderr);
    }

    private static function adminUrl(KilnProcess $kiln): string
    {
        $line = $kiln->waitForLog('~admin listener on http://127\.0\.0\.1:\d+~');
        $port = preg_match('~http://127\.0\.0\.1:(\d+)~', $line, $m) === 1 ? $m[1] : self::fail("no admin address in: $line");
        return 'http://127.0.0.1:' . $port;
    }

    private static function request(KilnProcess $kiln, string $method, string $path): int
    {
        $socket = stream_socket_client("tcp://127.0.0.1:{$kiln->port()}", $errno, $error, 5);
        self::assertNotFalse($socket, (string) $error);
        stream_set_timeout($socket, 5);
        fwrite($socket, "$method $path HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        $response = (string) stream_get_contents($socket);
        fclose($socket);
        return (int) substr($response, 9, 3);
    }

    /** @param list<string> $lines */
    private static function waitForMetrics(string $admin, array $lines): string
    {
        // Workers send their metrics to the supervisor once a second.
        $deadline = microtime(true) + 10;
        while (true) {
            $response = HttpClient::get("$admin/metrics");
            self::assertSame(200, $response['status']);
            if (array_diff($lines, explode("\n", $response['body'])) === [] || microtime(true) > $deadline) {
                return $response['body'];
            }
            usleep(100_000);
        }
    }

    private static function assertPromtoolAccepts(string $text): void
    {
        $promtool = trim((string) shell_exec('command -v promtool'));
        self::assertNotSame('', $promtool, 'promtool is missing: scripts/install-deps.sh dev installs it (Debian package prometheus)');
        $process = proc_open([$promtool, 'check', 'metrics'], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        self::assertIsResource($process);
        fwrite($pipes[0], $text);
        fclose($pipes[0]);
        $output = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        self::assertSame(0, proc_close($process), "promtool check metrics: $output");
    }
}
