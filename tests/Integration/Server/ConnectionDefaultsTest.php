<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Http\Limits;
use Kiln\Server\ConnectionPlan;
use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PhpExtensions;
use PHPUnit\Framework\TestCase;

/**
 * What a plain `kiln serve` does about connections: with FFI, the epoll driver, 10,000 connections per worker and
 * the open-files limit that takes, raised by Kiln itself from a low soft limit; without FFI, the select driver, its
 * safe cap, and the reason on the start-up line. And what that is for: 1,000 clients that send half a request
 * head and stall do not make ordinary requests fail.
 */
final class ConnectionDefaultsTest extends TestCase
{
    private const KILN = __DIR__ . '/../../../bin/kiln';
    private const APP = __DIR__ . '/../../Fixtures/http/app.php';
    private const SLOW_CLIENTS = 1000;

    public function testWithFfiEachWorkerTakesTenThousandConnectionsAndRaisesItsOpenFilesLimit(): void
    {
        if (!\extension_loaded('ffi')) {
            self::fail('ext-ffi is a dependency of the tests (scripts/install-deps.sh); it is not loaded');
        }
        // Started from a soft limit of 1024, as on a fresh login: Kiln raises it (the hard limit allows).
        $hard = posix_getrlimit()['hard openfiles'] ?? 0;
        if (is_numeric($hard) && (int) $hard < 20_000) {
            self::markTestSkipped("the hard open-files limit here ($hard) is below what 10,000 connections need");
        }
        $server = KilnProcess::launch(['/bin/sh', '-c', 'ulimit -Sn 1024 && exec "$0" "$@"', PHP_BINARY, self::KILN, 'serve',
            self::APP, '--listen=127.0.0.1:0', '--workers=2']);
        try {
            $ready = $server->waitForLog('~ready: http://~', 1.0);
            // Each connection one descriptor, each request that may run at once PER_REQUEST more, the worker's own.
            $openFiles = ConnectionPlan::EPOLL_DEFAULT + (new Limits())->concurrency * ConnectionPlan::PER_REQUEST + ConnectionPlan::RESERVE;
            self::assertStringContainsString('epoll driver, 10000 connections each', $ready);
            self::assertStringContainsString("open-files limit raised from 1024 to $openFiles", $ready);
            $workers = $server->workerPids();
            self::assertCount(2, $workers);
            foreach ($workers as $pid) {
                self::assertMatchesRegularExpression("~^Max open files\\s+$openFiles\\s~m", (string) file_get_contents("/proc/$pid/limits"));
            }
            self::assertSame(200, HttpClient::get($server->baseUrl() . '/hello')['status']);
        } finally {
            $server->stop();
        }
    }

    public function testWithoutFfiTheSelectDriverKeepsItsSafeCapAndTheReadyLineSaysWhy(): void
    {
        $php = PhpExtensions::withoutFfi(['ctype', 'pcntl', 'posix', 'tokenizer']);
        if (\is_string($php)) {
            self::markTestSkipped($php);
        }
        $server = KilnProcess::launch([PHP_BINARY, ...$php, self::KILN, 'serve', self::APP, '--listen=127.0.0.1:0', '--workers=1', '--jit=off']);
        try {
            $ready = $server->waitForLog('~ready: http://~', 1.0);
            self::assertStringContainsString('select driver, 512 connections each', $ready);
            self::assertStringContainsString('the FFI extension (php-ffi) is not loaded, and the epoll driver needs it', $ready);
            self::assertSame(200, HttpClient::get($server->baseUrl() . '/hello')['status']);
        } finally {
            $server->stop();
        }
    }

    public function testAThousandClientsStalledInTheirRequestHeadDoNotMakeOrdinaryRequestsFail(): void
    {
        $limits = posix_getrlimit();
        $soft = \is_array($limits) && is_numeric($limits['soft openfiles'] ?? null) ? (int) $limits['soft openfiles'] : 1024;
        $hard = \is_array($limits) && is_numeric($limits['hard openfiles'] ?? null) ? (int) $limits['hard openfiles'] : 4096;
        if ($soft < self::SLOW_CLIENTS + 256) {
            posix_setrlimit(POSIX_RLIMIT_NOFILE, min(4096, $hard), $hard); // this process's own sockets
        }
        $server = KilnProcess::start(self::APP, ['--workers=2']);
        $slow = [];
        try {
            // Each sends half a head and stalls, well inside the 10 s header timeout. Blocking sockets only:
            // stream_select() would break on this process's own descriptors above 1024.
            for ($i = 0; $i < self::SLOW_CLIENTS; $i++) {
                $socket = @stream_socket_client('tcp://127.0.0.1:' . $server->port(), $errno, $error, 5.0);
                self::assertNotFalse($socket, "slow client $i: $error");
                fwrite($socket, "GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
                $slow[] = $socket;
            }
            $statuses = [];
            $started = microtime(true);
            for ($i = 0; $i < 200; $i++) {
                $statuses[] = HttpClient::get($server->baseUrl() . '/hello')['status'];
            }
            $seconds = microtime(true) - $started;
            self::assertSame(array_fill(0, 200, 200), $statuses, 'statuses seen: ' . json_encode(array_count_values($statuses)));
            // The stalled clients were still held while the ordinary requests ran: none of them has been answered.
            $answered = 0;
            foreach ($slow as $socket) {
                stream_set_blocking($socket, false);
                $answered += fread($socket, 1) !== '' ? 1 : 0;
            }
            self::assertSame(0, $answered, sprintf('stalled clients answered during the %.1f s of ordinary requests', $seconds));
        } finally {
            foreach ($slow as $socket) {
                fclose($socket);
            }
            $server->stop();
        }
    }
}
