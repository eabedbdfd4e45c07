<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Site\Sequential\TimeLimit;
use PHPUnit\Framework\TestCase;

/**
 * The limit is enforced between its length and a second after it, and the alarm an earlier script left
 * pending never cuts a later script short (a signal before the limit would end its sleep() early). The
 * callback throws here so the test regains control; the runner's ends the process instead.
 */
final class TimeLimitTest extends TestCase
{
    protected function tearDown(): void
    {
        pcntl_alarm(0);
        pcntl_signal(SIGALRM, SIG_DFL);
        pcntl_async_signals(false);
    }

    public function testAScriptIsStoppedAfterItsLimitAndWithinASecondOfIt(): void
    {
        $limit = new TimeLimit(1.0);
        self::assertEqualsWithDelta(1.5, $this->runUntilStopped($limit), 0.55);
    }

    public function testAScriptStartedWhileAnEarlierAlarmIsPendingStillGetsItsWholeLimit(): void
    {
        $limit = new TimeLimit(1.0);
        $limit->arm(static function (): void {});
        $limit->disarm(); // a quick script: its alarm stays pending
        usleep(700_000);
        $ran = $this->runUntilStopped($limit);
        self::assertGreaterThanOrEqual(1.0, $ran, 'the earlier alarm cut the script short');
        self::assertLessThan(2.05, $ran);
    }

    public function testAnAlarmBetweenScriptsDoesNothingAndTheNextScriptIsStillLimited(): void
    {
        $limit = new TimeLimit(1.0);
        $limit->arm(static fn() => throw new \RuntimeException('must not run after disarm()'));
        $limit->disarm();
        pcntl_async_signals(true);
        usleep(2_300_000); // the alarm fires here, between scripts (interrupting the usleep)
        $deadline = microtime(true) + 2.5;
        while (microtime(true) < $deadline) {
            usleep(100_000);
        }
        pcntl_async_signals(false);
        self::assertEqualsWithDelta(1.5, $this->runUntilStopped($limit), 0.55);
    }

    public function testNoLimitArmsNothing(): void
    {
        $limit = new TimeLimit(0.0);
        $limit->arm(static fn() => throw new \RuntimeException('no limit'));
        self::assertSame(0, pcntl_alarm(0));
        $limit->disarm();
    }

    /**
     * Arms, sleeps until the callback throws; the seconds the "script" ran. Fails if a signal interrupted one
     * of its sleeps without stopping it: a script's own sleep() or database wait would have been cut short.
     */
    private function runUntilStopped(TimeLimit $limit): float
    {
        $started = microtime(true);
        $limit->arm(static fn() => throw new \RuntimeException('time limit'));
        try {
            for ($i = 0; $i < 50; $i++) {
                self::assertTrue(time_nanosleep(0, 100_000_000), 'a signal interrupted the script before its limit');
            }
            self::fail('the time limit did not stop the script within 5 s');
        } catch (\RuntimeException $e) {
            self::assertSame('time limit', $e->getMessage());
        } finally {
            $limit->disarm();
        }
        return microtime(true) - $started;
    }
}
