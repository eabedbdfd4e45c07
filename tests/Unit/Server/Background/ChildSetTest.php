<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server\Background;

use Kiln\Server\Background\ChildSet;
use Kiln\Server\Backoff;
use Kiln\Server\Log;
use Kiln\Server\LogFile;
use PHPUnit\Framework\TestCase;

/** The processes the supervisor keeps running, forked for real: one key is one process, whatever the order of events. */
final class ChildSetTest extends TestCase
{
    private ChildSet $set;

    protected function setUp(): void
    {
        $this->set = new ChildSet(new Log(new LogFile('/dev/null')), static function (): void {}, new Backoff(0.05, 0.05));
    }

    protected function tearDown(): void
    {
        $this->set->killAll();
        while (($pid = pcntl_waitpid(-1, $status, WNOHANG)) > 0 || ($pid === 0 && !$this->set->isEmpty())) {
            $pid > 0 ? $this->set->reaped($pid, $status) : usleep(10_000);
        }
    }

    /**
     * A process that died young is started again after a backoff; keep() in the meantime (a reload applying the
     * app's processes) starts it at once, and the pending start must not make it two.
     */
    public function testAKeepDuringACrashBackoffStartsOneProcessNotTwo(): void
    {
        $this->set->keep('process p', self::dies(...));
        $crashed = $this->set->pid('process p');
        self::assertNotNull($crashed);
        pcntl_waitpid($crashed, $status);
        self::assertTrue($this->set->reaped($crashed, $status));
        self::assertNull($this->set->pid('process p'), 'waiting out the backoff');
        self::assertLessThan(INF, $this->set->nextWakeAt());

        $this->set->keep('process p', self::runs(...));
        $running = $this->set->pid('process p');
        self::assertNotNull($running);
        usleep(100_000); // past the backoff
        $this->set->tick(microtime(true));

        self::assertSame($running, $this->set->pid('process p'));
        self::assertSame(0, pcntl_waitpid(-1, $status, WNOHANG), 'no other process was started (and ended) meanwhile');
        self::assertSame(INF, $this->set->nextWakeAt(), 'no start pending');
        self::assertSame([$running], self::children(), 'one process runs under the key');
    }

    private static function dies(): int
    {
        posix_kill(getmypid(), SIGKILL); // not exit(): the test runner's shutdown must not run in the child
        return 1;
    }

    private static function runs(): int
    {
        sleep(30);
        posix_kill(getmypid(), SIGKILL);
        return 0;
    }

    /** @return list<int> this process's children that run */
    private static function children(): array
    {
        $pids = [];
        foreach (glob('/proc/[0-9]*/stat') ?: [] as $file) {
            $stat = (string) @file_get_contents($file);
            $fields = explode(' ', substr($stat, (int) strrpos($stat, ')') + 2));
            if ((int) ($fields[1] ?? 0) === getmypid() && ($fields[0] ?? '') !== 'Z') {
                $pids[] = (int) basename(\dirname($file));
            }
        }
        return $pids;
    }
}
