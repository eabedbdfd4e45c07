<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

/** A script past its time limit gets a 504 at once and its worker is replaced. */
final class TimeLimitTest extends SequentialTestCase
{
    protected function setUp(): void
    {
        $this->startServer(['KILN_TEST_TIME_LIMIT' => '1']);
    }

    public function testASleepingScriptIsAnsweredWith504AfterTheLimitAndTheWorkerIsReplaced(): void
    {
        $pid = $this->workerPid();
        $started = microtime(true);
        $response = $this->request('GET', '/sleep.php', [], '', 8.0);
        $took = microtime(true) - $started;
        self::assertSame(504, $response['status']);
        self::assertGreaterThanOrEqual(0.9, $took);
        self::assertLessThan(5.0, $took, 'sleep(10) was interrupted');
        $replaced = $this->waitForReplacement($pid);
        self::assertSame($replaced, $this->workerPid());
        self::assertStringContainsString('/sleep.php ran past the time limit of 1 s', $this->server()->log());
        $this->server()->waitForLog("~worker 1 \\(pid $pid\\) will be replaced: /sleep\\.php ran past the time limit of 1 s \\(--time-limit\\)~", 5.0);
    }

    public function testAScriptStoppedBeforeAnInterpolationIsAnsweredWith504WithoutACrash(): void
    {
        $pid = $this->workerPid();
        $response = $this->request('GET', '/sleep-then-interpolate.php', [], '', 8.0);
        self::assertSame(504, $response['status']);
        $this->waitForReplacement($pid);
        $this->server()->waitForLog("~worker 1 \\(pid $pid\\) will be replaced: /sleep-then-interpolate\\.php ran past the time limit~", 5.0);
        self::assertStringNotContainsString('SIGSEGV', $this->server()->log());
        self::assertStringNotContainsString('restarting it in', $this->server()->log(), 'taken for a crash');
        self::assertSame(200, $this->get('/pid.php')['status']);
    }

    public function testABusyLoopIsStoppedToo(): void
    {
        $pid = $this->workerPid();
        $response = $this->request('GET', '/spin.php', [], '', 8.0);
        self::assertSame(504, $response['status']);
        $this->waitForReplacement($pid);
        self::assertSame(200, $this->get('/pid.php')['status']);
    }

    public function testAQuickScriptIsNotAffectedByTheLimitOfEarlierOnes(): void
    {
        $pid = $this->workerPid();
        for ($i = 0; $i < 3; $i++) {
            self::assertSame(200, $this->get('/dump.php')['status']);
        }
        usleep(1_200_000); // past the limit since the first request: no alarm may be left armed
        self::assertSame($pid, $this->workerPid());
    }
}
