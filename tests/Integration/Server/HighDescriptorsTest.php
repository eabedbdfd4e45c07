<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * A supervisor whose descriptors are numbered past 1023, as one of a few hundred workers has them (three each):
 * stream_select() cannot watch those (FD_SETSIZE), and a supervisor that relied on it never saw its workers ready
 * and spun. Here the server inherits 1,100 open descriptors, which pushes every one it opens past that number.
 */
final class HighDescriptorsTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';
    private const BUS = __DIR__ . '/../../Fixtures/bus/app.php';
    private const KILN = __DIR__ . '/../../../bin/kiln';

    /** bash opens descriptors 3 to 1102, then runs the command: every descriptor kiln opens is numbered past 1023. */
    private const OPEN = 'for fd in $(seq 3 1102); do eval "exec $fd</dev/null"; done; exec "$@"';

    private ?string $dir = null;

    private ?KilnProcess $server = null;

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
        if ($this->dir !== null) {
            $pid = (int) @file_get_contents("{$this->dir}/kiln.pid");
            if ($pid > 0) {
                @posix_kill($pid, SIGKILL);
            }
            array_map('unlink', glob("{$this->dir}/*") ?: []);
            @rmdir($this->dir);
            $this->dir = null;
        }
    }

    public function testAServerWhoseDescriptorsArePastStreamSelectsLimitStartsServesAndReloads(): void
    {
        $this->server = $server = KilnProcess::launch(
            ['bash', '-c', self::OPEN, 'kiln', PHP_BINARY, self::KILN, 'serve', self::APP, '--listen=127.0.0.1:0', '--workers=2'],
            [],
            20.0,
        );
        $supervisor = $server->pid();
        $highest = max(array_map('intval', array_map('basename', glob("/proc/$supervisor/fd/*") ?: [])));
        self::assertGreaterThan(1102, $highest, 'the supervisor holds descriptors past 1023');
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/')['status']);

        $server->signal(SIGHUP);
        $server->waitForLog('/reloaded: generation 2 serving/', 20.0);
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/')['status']);
        self::assertSame(0, $server->stop());
        $this->server = null;
    }

    /** The launcher of --daemon waited for the daemon's word with stream_select(), and said it failed to start. */
    public function testADaemonStartsThoughItsDescriptorsArePastStreamSelectsLimit(): void
    {
        $this->dir = $dir = sys_get_temp_dir() . '/kiln-high-fds-' . bin2hex(random_bytes(4));
        mkdir($dir);
        $process = proc_open(
            ['bash', '-c', self::OPEN, 'kiln', PHP_BINARY, self::KILN, 'serve', self::APP, '--daemon', "--pid-file=$dir/kiln.pid", '--listen=127.0.0.1:0', '--workers=1'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/stdout", 'w'], 2 => ['file', "$dir/stderr", 'w']],
            $pipes,
        );
        self::assertIsResource($process);
        $deadline = microtime(true) + 20.0;
        while (($status = proc_get_status($process))['running'] && microtime(true) < $deadline) {
            usleep(20_000);
        }
        if ($status['running']) {
            proc_terminate($process, SIGKILL);
        }
        proc_close($process);
        self::assertFalse($status['running'], 'the launcher returned');
        self::assertSame(0, $status['exitcode'], (string) file_get_contents("$dir/stderr"));
        self::assertMatchesRegularExpression('~^kiln: serving (http://127\.0\.0\.1:\d+) in the background~', (string) file_get_contents("$dir/stdout"));
        preg_match('~(http://127\.0\.0\.1:\d+)~', (string) file_get_contents("$dir/stdout"), $url);
        self::assertSame(200, HttpClient::get($url[1] . '/')['status']);
        [$code] = KilnProcess::run(['stop', "--pid-file=$dir/kiln.pid"], 15);
        self::assertSame(0, $code);
    }

    /**
     * A worker that ends writes what it still owes the other workers before it exits; that wait was stream_select(),
     * which failed at once here, and a message published just before exit() was lost.
     */
    public function testAMebibytePublishedJustBeforeAWorkerExitsReachesTheOtherWorker(): void
    {
        $this->server = $server = KilnProcess::launch(
            ['bash', '-c', self::OPEN, 'kiln', PHP_BINARY, self::KILN, 'serve', self::BUS, '--listen=127.0.0.1:0', '--workers=2', '--pool-size=1'],
            [],
            20.0,
        );
        $size = 1 << 20;
        $response = HttpClient::get($server->baseUrl() . "/exit.php?size=$size", [], 15.0);
        self::assertSame(200, $response['status'], $response['body']);
        $exited = (int) $response['body'];
        $deadline = microtime(true) + 15.0;
        $heard = [];
        while (microtime(true) < $deadline) {
            $report = json_decode(HttpClient::get($server->baseUrl() . '/received', [], 10.0)['body'], true);
            self::assertIsArray($report);
            if ($report['pid'] !== $exited) {
                $heard[$report['pid']] = array_map('strlen', $report['messages']);
                if (\in_array($size, $heard[$report['pid']], true)) {
                    return;
                }
            }
            usleep(50_000);
        }
        self::fail("no other worker heard the message of worker $exited: " . json_encode($heard) . "\n" . $server->log());
    }
}
