<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** A pid file left by a supervisor that was killed names, once the pid is reused, a process that is not Kiln's. */
final class StalePidFileTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    private string $pidFile;

    /** @var resource|null */
    private mixed $sleep = null;

    private int $sleepPid = 0;

    protected function setUp(): void
    {
        $this->pidFile = sys_get_temp_dir() . '/kiln-test-stale-' . bin2hex(random_bytes(4)) . '.pid';
        $sleep = proc_open(['sleep', '30'], [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        self::assertNotFalse($sleep);
        $this->sleep = $sleep;
        $this->sleepPid = (int) proc_get_status($sleep)['pid'];
        file_put_contents($this->pidFile, $this->sleepPid . "\n");
    }

    protected function tearDown(): void
    {
        if ($this->sleep !== null) {
            posix_kill($this->sleepPid, SIGKILL);
            proc_close($this->sleep);
        }
        @unlink($this->pidFile);
    }

    public function testStatusThroughAStalePidFileSaysNotRunningAndNamesTheFile(): void
    {
        [$code, $stdout, $stderr] = KilnProcess::run(['status', "--pid-file=$this->pidFile"]);
        self::assertSame(3, $code, $stdout . $stderr);
        self::assertSame('', $stdout);
        self::assertSame("kiln: no running server: the pid file $this->pidFile is stale (process $this->sleepPid is not a Kiln supervisor)\n", $stderr);
        $this->assertTheSleepStillRuns();
    }

    public function testReloadThroughAStalePidFileSignalsNothing(): void
    {
        [$code, $stdout, $stderr] = KilnProcess::run(['reload', "--pid-file=$this->pidFile"]);
        self::assertSame(1, $code, $stdout . $stderr);
        self::assertSame('', $stdout);
        self::assertStringContainsString("the pid file $this->pidFile is stale (process $this->sleepPid is not a Kiln supervisor)", $stderr);
        $this->assertTheSleepStillRuns();
    }

    public function testStopThroughAStalePidFileSignalsNothing(): void
    {
        foreach ([['stop'], ['stop', '--graceful']] as $command) {
            [$code, $stdout, $stderr] = KilnProcess::run([...$command, "--pid-file=$this->pidFile", '--timeout=2']);
            self::assertSame(1, $code, $stdout . $stderr);
            self::assertSame('', $stdout);
            self::assertStringContainsString("the pid file $this->pidFile is stale (process $this->sleepPid is not a Kiln supervisor)", $stderr);
            $this->assertTheSleepStillRuns();
        }
    }

    public function testServeReplacesAStalePidFileAndSaysSoInTheLogOnce(): void
    {
        $kiln = KilnProcess::start(self::APP, ["--pid-file=$this->pidFile", '--workers=1']);
        self::assertSame((string) $kiln->pid(), trim((string) file_get_contents($this->pidFile)));
        self::assertSame(1, substr_count($kiln->log(), 'replacing the stale pid file'), $kiln->log());
        self::assertStringContainsString("replacing the stale pid file $this->pidFile (process $this->sleepPid is not a Kiln supervisor)", $kiln->log());
        [$code, $stdout] = KilnProcess::run(['status', "--pid-file=$this->pidFile"]);
        self::assertSame(0, $code);
        self::assertMatchesRegularExpression("~^kiln \\w+: supervisor pid {$kiln->pid()} ~", $stdout);
        self::assertSame(0, $kiln->stop());
        self::assertFileDoesNotExist($this->pidFile);
        $this->assertTheSleepStillRuns();
    }

    private function assertTheSleepStillRuns(): void
    {
        self::assertNotNull($this->sleep);
        // A signal sent is delivered at once; give the sleep a moment to be reaped if it was killed.
        for ($i = 0; $i < 5; $i++) {
            self::assertTrue(proc_get_status($this->sleep)['running'], "the unrelated process $this->sleepPid still runs");
            usleep(50_000);
        }
    }
}
