<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\CancelledException;
use Kiln\Loop\Process;
use Kiln\Loop\ProcessResult;
use Kiln\Loop\TimeoutCancellation;
use Kiln\Loop\TimeoutException;

final class ProcessTest extends LoopTestCase
{
    public function testRunCollectsTheExitCodeStdoutAndStderr(): void
    {
        $result = $this->inFiber(static fn() => Process::run(['sh', '-c', 'echo out; echo err >&2; exit 3']));
        self::assertInstanceOf(ProcessResult::class, $result);
        self::assertSame([3, "out\n", "err\n"], [$result->exitCode, $result->stdout, $result->stderr]);
        self::assertFalse($result->isSuccessful());
    }

    public function testRunFeedsInputWhileReadingBothPipesSoNoPipeCanFillUp(): void
    {
        $input = \str_repeat("0123456789abcdef\n", 1 << 16); // 1.1 MB, far above a pipe's 64 KB
        $result = $this->inFiber(static fn() => Process::run(['sh', '-c', 'head -c 1000000 /dev/zero >&2; cat'], $input));
        self::assertInstanceOf(ProcessResult::class, $result);
        self::assertSame(0, $result->exitCode);
        self::assertSame(\md5($input), \md5($result->stdout));
        self::assertSame(1_000_000, \strlen($result->stderr));
    }

    public function testRunHonoursTheWorkingDirectoryAndEnvironment(): void
    {
        $dir = \realpath(\sys_get_temp_dir());
        self::assertIsString($dir);
        $result = $this->inFiber(static fn() => Process::run(['sh', '-c', 'echo "$KILN_TEST"; pwd'], '', null, $dir, ['KILN_TEST' => 'yes']));
        self::assertSame("yes\n$dir\n", $result->stdout);
    }

    public function testAMissingProgramExitsWith127(): void
    {
        $result = $this->inFiber(static fn() => Process::run(['/nonexistent/kiln-test-program']));
        self::assertSame(127, $result->exitCode);
    }

    public function testAProcessIsDrivenChunkWiseThroughItsPipes(): void
    {
        $process = Process::start(['cat']);
        self::assertGreaterThan(0, $process->pid());
        $echoed = $this->inFiber(static function () use ($process): array {
            $process->write("hello\n");
            $first = $process->readStdout();
            $process->closeStdin();

            return [$first, $process->readStdout(), $process->readStderr(), $process->join()];
        });
        self::assertSame(["hello\n", null, null, 0], $echoed);
        self::assertFalse($process->isRunning());
    }

    public function testJoinReportsASignalAs128PlusItsNumber(): void
    {
        $process = Process::start(['sleep', '30']);
        $process->signal(\SIGTERM);
        self::assertSame(128 + \SIGTERM, $this->inFiber(static fn() => $process->join()));
    }

    public function testACancelledJoinTerminatesAndReapsTheChild(): void
    {
        $process = Process::start(['sleep', '30']);
        $pid = $process->pid();
        $caught = $this->inFiber(static function () use ($process): ?CancelledException {
            try {
                $process->join(new TimeoutCancellation(0.02));
            } catch (TimeoutException $e) {
                return $e;
            }

            return null;
        });
        self::assertInstanceOf(TimeoutException::class, $caught);
        self::assertFalse($process->isRunning());
        self::assertFalse(\posix_kill($pid, 0), 'the child is gone (reaped, not a zombie)');
    }

    public function testAChildIgnoringTermIsKilledAfterTheGrace(): void
    {
        $result = $this->inFiber(static function (): ?string {
            try {
                Process::run(['sh', '-c', "trap '' TERM; echo ready; exec sleep 30"], '', new TimeoutCancellation(0.2));
            } catch (CancelledException $e) {
                return $e::class;
            }

            return null;
        }, Process::TERM_GRACE + 3.0);
        self::assertSame(TimeoutException::class, $result);
    }

    public function testAProcessDroppedWhileRunningIsKilledAndReaped(): void
    {
        $process = Process::start(['sleep', '30']);
        $pid = $process->pid();
        unset($process);
        $this->inFiber(static fn() => \Kiln\Loop\delay(0.2));
        self::assertFalse(\posix_kill($pid, 0));
    }

    public function testTheWorkerKeepsRunningOtherFibersWhileWaitingForAChild(): void
    {
        $ticks = 0;
        $ticker = \Kiln\Loop\async(static function () use (&$ticks): void {
            for ($i = 0; $i < 5; $i++) {
                \Kiln\Loop\delay(0.01);
                $ticks++;
            }
        });
        $result = $this->inFiber(static fn() => Process::run(['sh', '-c', 'sleep 0.2; echo done']));
        self::assertSame("done\n", $result->stdout);
        self::assertTrue($ticker->isComplete());
        self::assertSame(5, $ticks);
    }

    /**
     * @template T
     *
     * @param \Closure(): T $fn
     *
     * @return T
     */
    private function inFiber(\Closure $fn, float $guard = 5.0): mixed
    {
        $future = \Kiln\Loop\async($fn);
        $this->runGuarded($guard);
        self::assertTrue($future->isComplete(), 'The Fiber did not finish');

        return $future->await();
    }
}
