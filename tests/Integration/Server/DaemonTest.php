<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

final class DaemonTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/kiln-daemon-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        $pid = (int) @file_get_contents("{$this->dir}/kiln.pid");
        if ($pid > 0) {
            @posix_kill($pid, SIGKILL);
        }
        exec('rm -rf ' . escapeshellarg($this->dir));
    }

    public function testADaemonIsControlledThroughItsPidFile(): void
    {
        $pidFile = "{$this->dir}/kiln.pid";
        [$code, $stdout, $stderr] = KilnProcess::run(['serve', self::APP, '--daemon', "--pid-file=$pidFile", '--listen=127.0.0.1:0', '--workers=2'], 15);
        self::assertSame(0, $code, $stderr);
        self::assertSame('', $stderr);
        $pid = (int) file_get_contents($pidFile);
        self::assertMatchesRegularExpression('~^kiln: serving http://127\.0\.0\.1:\d+ in the background: supervisor pid ' . $pid . ', pid file '
            . preg_quote($pidFile, '~') . ', error log ' . preg_quote("{$this->dir}/kiln.log", '~') . '\n$~', $stdout);
        self::assertTrue(posix_kill($pid, 0), 'the daemon runs');
        $log = (string) file_get_contents("{$this->dir}/kiln.log");
        self::assertSame(1, preg_match('~ready: http://127\.0\.0\.1:(\d+)~', $log, $m), $log);
        self::assertSame(200, HttpClient::get("http://127.0.0.1:{$m[1]}/")['status']);

        $status = $this->eventually(function () use ($pidFile): string {
            [$code, $stdout] = KilnProcess::run(['status', "--pid-file=$pidFile"]);
            self::assertSame(0, $code);
            return preg_match_all('~worker \d+  pid \d+  ready~', $stdout) === 2 ? $stdout : '';
        });
        self::assertStringContainsString("supervisor pid $pid", $status);

        [$code, $stdout] = KilnProcess::run(['reload', "--pid-file=$pidFile"]);
        self::assertSame(0, $code);
        self::assertStringContainsString('reload requested', $stdout);
        $this->eventually(fn(): string => str_contains((string) file_get_contents("{$this->dir}/kiln.log"), 'reloaded: generation 2') ? 'yes' : '');
        self::assertSame(200, HttpClient::get("http://127.0.0.1:{$m[1]}/")['status']);

        [$code, $stdout, $stderr] = KilnProcess::run(['stop', "--pid-file=$pidFile"], 15);
        self::assertSame(0, $code, $stderr);
        self::assertStringContainsString("stopped server $pid", $stdout);
        self::assertFileDoesNotExist($pidFile);
        [$code] = KilnProcess::run(['status', "--pid-file=$pidFile"]);
        self::assertSame(3, $code, 'status says: not running');
    }

    public function testWhatPhpWritesToStandardErrorReachesTheDaemonsErrorLogAlsoAfterARotation(): void
    {
        $pidFile = "{$this->dir}/kiln.pid";
        $logFile = "{$this->dir}/kiln.log";
        [$code, , $stderr] = KilnProcess::run(['serve', __DIR__ . '/../../Fixtures/sequential/public', '--tier=sequential', '--daemon',
            "--pid-file=$pidFile", '--listen=127.0.0.1:0', '--workers=1'], 15);
        self::assertSame(0, $code, $stderr);
        self::assertSame(1, preg_match('~ready: http://127\.0\.0\.1:(\d+)~', (string) file_get_contents($logFile), $m));
        $url = "http://127.0.0.1:{$m[1]}/uncaught.php";
        self::assertSame(500, HttpClient::get($url)['status']);
        // PHP's own line, written to the worker's standard error (the script's uncaught exception).
        $this->eventually(fn(): string => str_contains((string) file_get_contents($logFile), 'PHP Fatal error:  Uncaught') ? 'yes' : '');

        rename($logFile, "$logFile.1");
        posix_kill((int) file_get_contents($pidFile), SIGUSR1);
        $this->eventually(fn(): string => is_file($logFile) ? 'yes' : '');
        // The worker gets the signal after the supervisor: ask until its line lands in the new file.
        $this->eventually(function () use ($url, $logFile): string {
            HttpClient::get($url);
            return str_contains((string) @file_get_contents($logFile), 'PHP Fatal error:  Uncaught') ? 'yes' : '';
        });
        KilnProcess::run(['stop', "--pid-file=$pidFile"], 15);
    }

    public function testADaemonThatCannotStartReportsWhyToTheLauncher(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', __DIR__ . '/../../Fixtures/server/boot-fails.php', '--daemon',
            "--pid-file={$this->dir}/kiln.pid", '--listen=127.0.0.1:0', '--workers=1'], 15);
        self::assertSame(1, $code);
        self::assertStringContainsString('database unreachable at boot', $stderr);
        self::assertFileDoesNotExist("{$this->dir}/kiln.pid");
    }

    /** @param \Closure(): string $probe returns '' until satisfied */
    private function eventually(\Closure $probe, float $timeout = 10.0): string
    {
        $deadline = microtime(true) + $timeout;
        while (($result = $probe()) === '') {
            if (microtime(true) > $deadline) {
                self::fail('condition not met in time');
            }
            usleep(100_000);
        }
        return $result;
    }
}
