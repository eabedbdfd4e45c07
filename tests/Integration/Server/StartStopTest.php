<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

final class StartStopTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    public function testTheServerStartsServesAndStopsOnTerm(): void
    {
        $kiln = KilnProcess::start(self::APP);
        self::assertMatchesRegularExpression('~ready: http://127\.0\.0\.1:\d+ \(2 workers, \w+ driver~', $kiln->log());
        self::assertCount(2, $kiln->workerPids());
        $response = HttpClient::get($kiln->baseUrl() . '/');
        self::assertSame(200, $response['status']);
        self::assertStringStartsWith('hello from', $response['body']);
        $pidFile = sys_get_temp_dir() . '/kiln-127.0.0.1-' . $kiln->port() . '.pid';
        self::assertSame((string) $kiln->pid(), trim((string) file_get_contents($pidFile)));
        $workers = $kiln->workerPids();
        self::assertSame(0, $kiln->stop());
        self::assertFileDoesNotExist($pidFile);
        foreach ($workers as $pid) {
            self::assertFalse(file_exists("/proc/$pid") && !str_contains((string) @file_get_contents("/proc/$pid/stat"), ') Z'), "worker $pid is gone");
        }
    }

    public function testABadOptionExitsWithCode2AndOneLine(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', self::APP, '--workers=zero']);
        self::assertSame(2, $code);
        self::assertSame("kiln: --workers must be a whole number, got 'zero'\n", $stderr);
    }

    public function testAMissingPathExitsWithCode2(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', '/no/such/app.php']);
        self::assertSame(2, $code);
        self::assertSame(1, substr_count($stderr, "\n"));
        self::assertStringContainsString('does not exist', $stderr);
    }

    public function testAPortAlreadyTakenExitsWithCode1AndOneLine(): void
    {
        $taken = stream_socket_server('tcp://127.0.0.1:0');
        self::assertNotFalse($taken);
        $address = (string) stream_socket_get_name($taken, false);
        [$code, , $stderr] = KilnProcess::run(['serve', self::APP, "--listen=$address", '--workers=1']);
        fclose($taken);
        self::assertSame(1, $code);
        self::assertSame(1, substr_count($stderr, "\n"), $stderr);
        self::assertStringContainsString("Cannot listen on $address", $stderr);
    }

    public function testAnAppThatThrowsAtBootExitsWithCode1AndTheReason(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', __DIR__ . '/../../Fixtures/server/boot-fails.php', '--listen=127.0.0.1:0', '--workers=2']);
        self::assertSame(1, $code);
        self::assertStringContainsString('database unreachable at boot', $stderr);
        self::assertSame(1, substr_count(trim($stderr), "\n") + 1, $stderr);
    }

    public function testAPidFileHeldByALiveServerRefusesASecondOne(): void
    {
        $pidFile = sys_get_temp_dir() . '/kiln-test-' . bin2hex(random_bytes(4)) . '.pid';
        $kiln = KilnProcess::start(self::APP, ["--pid-file=$pidFile", '--workers=1']);
        [$code, , $stderr] = KilnProcess::run(['serve', self::APP, '--listen=127.0.0.1:0', "--pid-file=$pidFile"]);
        self::assertSame(1, $code);
        self::assertStringContainsString("is held by running process {$kiln->pid()}", $stderr);
        self::assertSame(0, $kiln->stop());
    }

    public function testQuitLetsTheRequestInFlightFinishThenExitsZero(): void
    {
        $flag = sys_get_temp_dir() . '/kiln-test-slow-' . bin2hex(random_bytes(4));
        $kiln = KilnProcess::start(self::APP, [], ['KILN_TEST_SLOW_FLAG' => $flag]);
        $socket = stream_socket_client("tcp://127.0.0.1:{$kiln->port()}", $errno, $errstr, 2);
        self::assertNotFalse($socket);
        fwrite($socket, "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $deadline = microtime(true) + 5;
        while (!file_exists($flag) && microtime(true) < $deadline) {
            usleep(10_000);
        }
        self::assertFileExists($flag, 'the slow request reached the app');
        $kiln->signal(SIGQUIT);
        stream_set_timeout($socket, 10);
        $response = HttpClient::parse((string) stream_get_contents($socket));
        fclose($socket);
        @unlink($flag);
        self::assertSame(200, $response['status']);
        self::assertSame('slow done', $response['body']);
        self::assertSame(0, $kiln->waitForExit(10.0), $kiln->log());
        self::assertStringContainsString('draining (SIGQUIT)', $kiln->log());
    }
}
