<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** `kiln status` writing into a pipe: `| head -1`, `| jq`. */
final class StatusOutputTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    private const KILN = __DIR__ . '/../../../bin/kiln';

    private ?KilnProcess $kiln = null;

    private string $pidFile = '';

    private string $errFile = '';

    protected function setUp(): void
    {
        $this->pidFile = sys_get_temp_dir() . '/kiln-test-' . bin2hex(random_bytes(4)) . '.pid';
        $this->errFile = (string) tempnam(sys_get_temp_dir(), 'kiln-test-err-');
        $this->kiln = KilnProcess::start(self::APP, ["--pid-file=$this->pidFile", '--workers=1']);
    }

    protected function tearDown(): void
    {
        $this->kiln?->stop();
        @unlink($this->errFile);
    }

    public function testStatusWatchEndsQuietlyWithCode0OnceItsOutputPipeIsClosed(): void
    {
        [$process, $stdout] = $this->runStatus(['--watch']);
        self::assertStringContainsString('kiln status --watch', $this->readLine($stdout));
        fclose($stdout);
        $code = $this->waitForExit($process);
        self::assertSame(0, $code, 'the command ended by itself');
        self::assertSame('', file_get_contents($this->errFile));
    }

    public function testStatusIntoAPipeAlreadyClosedSaysNothingAndExits0(): void
    {
        [$process, $stdout] = $this->runStatus([]);
        fclose($stdout);
        self::assertSame(0, $this->waitForExit($process));
        self::assertSame('', file_get_contents($this->errFile));
    }

    public function testStatusJsonWatchPrintsOneJsonObjectPerLineEverySecond(): void
    {
        [$process, $stdout] = $this->runStatus(['--json', '--watch']);
        for ($i = 0; $i < 2; $i++) {
            $line = $this->readLine($stdout);
            $status = json_decode($line, true);
            self::assertIsArray($status, $line);
            self::assertSame($this->kiln?->pid(), $status['pid']);
            self::assertIsArray($status['workers']);
        }
        fclose($stdout);
        self::assertSame(0, $this->waitForExit($process));
        self::assertSame('', file_get_contents($this->errFile));
    }

    /**
     * @param list<string> $options
     * @return array{resource, resource}
     */
    private function runStatus(array $options): array
    {
        $process = proc_open(
            [PHP_BINARY, self::KILN, 'status', ...$options, "--pid-file=$this->pidFile"],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', $this->errFile, 'w']],
            $pipes,
        );
        self::assertNotFalse($process);
        return [$process, $pipes[1]];
    }

    /** @param resource $stream */
    private function readLine(mixed $stream): string
    {
        $read = [$stream];
        $none = null;
        self::assertSame(1, stream_select($read, $none, $none, 10), 'a line within 10 s');
        $line = fgets($stream);
        self::assertIsString($line);
        return $line;
    }

    /** @param resource $process */
    private function waitForExit(mixed $process): int
    {
        $deadline = microtime(true) + 10;
        while (($status = proc_get_status($process))['running'] && microtime(true) < $deadline) {
            usleep(20_000);
        }
        if ($status['running']) {
            proc_terminate($process, SIGKILL);
            proc_close($process);
            self::fail('kiln status still runs 10 s after its output was closed; stderr: ' . file_get_contents($this->errFile));
        }
        proc_close($process);
        return $status['exitcode'];
    }
}
