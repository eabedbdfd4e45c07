<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Internal;

use Kiln\App\Internal\Schedule;
use Kiln\App\Timer;
use Kiln\App\WorkerInfo;

use function Kiln\Loop\delay;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Store\MemoryTable;
use Kiln\Store\SharedState;
use PHPUnit\Framework\TestCase;

/** The app's timers and hooks on a real loop, without a server: runs last until a condition holds (or a guard gives up). */
final class ScheduleTest extends TestCase
{
    private string $path = '';

    /** @var list<string> */
    private array $log = [];

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
        $this->path = sys_get_temp_dir() . '/kiln-schedule-test-' . getmypid() . '-' . bin2hex(random_bytes(4));
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    public function testStartHooksRunBeforeTheTimersAndWhatTheyThrowIsLogged(): void
    {
        $schedule = new Schedule();
        $order = [];
        $schedule->onStart(function (WorkerInfo $worker) use (&$order): void {
            $order[] = "start {$worker->number} {$worker->pid}";
            throw new \RuntimeException('hook failed');
        });
        $schedule->add(new Timer(0.01, false, function () use (&$order): void {
            $order[] = 'timer';
        }));

        $this->start($schedule, new WorkerInfo(3, 4711));
        $this->runUntil(static function () use (&$order): bool {
            return \in_array('timer', $order, true);
        });

        self::assertSame(['start 3 4711', 'timer'], $order);
        self::assertCount(1, $this->log);
        self::assertStringStartsWith('onWorkerStart failed: RuntimeException: hook failed at ' . __FILE__, $this->log[0]);
    }

    public function testATimerThatThrowsIsLoggedAndFiresAgain(): void
    {
        $schedule = new Schedule();
        $runs = 0;
        $schedule->add(new Timer(0.01, true, function () use (&$runs): void {
            $runs++;
            throw new \LogicException("run $runs");
        }));

        $this->start($schedule);
        $this->runUntil(static function () use (&$runs): bool {
            return $runs >= 3;
        });

        self::assertStringStartsWith('timer every 0.01 s failed: LogicException: run 1', $this->log[0]);
        self::assertStringStartsWith('timer every 0.01 s failed: LogicException: run 2', $this->log[1]);
    }

    public function testARunStillGoingWhenTheNextIsDueIsNotStacked(): void
    {
        $schedule = new Schedule();
        $running = 0;
        $most = 0;
        $runs = 0;
        $schedule->add(new Timer(0.005, true, function () use (&$running, &$most, &$runs): void {
            $running++;
            $most = max($most, $running);
            delay(0.03);
            $running--;
            $runs++;
        }));

        $this->start($schedule);
        $this->runUntil(static function () use (&$runs): bool {
            return $runs >= 2;
        });

        self::assertSame(1, $most);
    }

    public function testACancelledTimerNeverRunsAndHaltEndsTheOthers(): void
    {
        $schedule = new Schedule();
        $fired = [];
        $schedule->add(new Timer(0.01, false, function () use (&$fired): void {
            $fired[] = 'cancelled';
        }))->cancel();
        $kept = $schedule->add(new Timer(0.01, true, function () use (&$fired): void {
            $fired[] = 'kept';
        }));

        $this->start($schedule);
        $this->runUntil(static function () use (&$fired): bool {
            return \count($fired) >= 2;
        });
        $schedule->halt();
        $before = \count($fired);
        $this->runFor(0.05);

        self::assertSame(['kept'], array_values(array_unique($fired)));
        self::assertSame($before, \count($fired), 'no run after halt()');
        self::assertFalse($kept->isCancelled());
    }

    public function testStopHooksRunOnceAndThenTheDoneCallback(): void
    {
        $schedule = new Schedule();
        $events = [];
        $schedule->onStop(function (WorkerInfo $worker) use (&$events): void {
            delay(0.01); // a stop hook may wait
            $events[] = "stop {$worker->number}";
        });
        $this->start($schedule);
        $this->runFor(0.01);

        $schedule->stop(new WorkerInfo(1, 1), function () use (&$events): void {
            $events[] = 'done';
        });
        $schedule->stop(new WorkerInfo(1, 1), function () use (&$events): void {
            $events[] = 'done again';
        });
        $this->runUntil(static function () use (&$events): bool {
            return \in_array('done', $events, true);
        });

        self::assertSame(['done again', 'stop 1', 'done'], $events);
    }

    public function testANodeWideTimerFiresOnlyWhereTheLeaseIsHeldAndMovesWhenItsHolderStops(): void
    {
        $state = MemoryTable::file($this->path, buckets: 16, slots: 4);
        $fired = [];
        $schedules = [];
        foreach ([101, 102] as $pid) {
            $schedule = $schedules[$pid] = new Schedule();
            $schedule->add(new Timer(0.01, true, function () use (&$fired, $pid): void {
                $fired[] = $pid;
            }, 'cleanup'));
            $this->start($schedule, new WorkerInfo($pid - 100, $pid), $state);
        }
        $this->runUntil(static function () use (&$fired): bool {
            return \count($fired) >= 5;
        });
        $first = $fired[0];
        self::assertSame([$first], array_values(array_unique($fired)), 'one holder fires');

        $schedules[$first]->halt(); // an orderly stop gives the lease up
        $fired = [];
        $this->runUntil(static function () use (&$fired): bool {
            return \count($fired) >= 3;
        }, 5.0);

        self::assertSame([$first === 101 ? 102 : 101], array_values(array_unique($fired)));
    }

    public function testANodeWideNameIsRegisteredOnce(): void
    {
        $schedule = new Schedule();
        $schedule->add(new Timer(1, true, static fn() => null, 'once'));
        $this->expectException(\ValueError::class);
        $schedule->add(new Timer(2, true, static fn() => null, 'once'));
    }

    private function start(Schedule $schedule, WorkerInfo $worker = new WorkerInfo(1, 1), ?SharedState $state = null): void
    {
        $state ??= MemoryTable::file($this->path, buckets: 16, slots: 4);
        $schedule->start($worker, function (string $line): void {
            $this->log[] = $line;
        }, static fn(): SharedState => $state);
    }

    /** @param \Closure(): bool $done */
    private function runUntil(\Closure $done, float $guard = 3.0): void
    {
        $deadline = microtime(true) + $guard;
        $check = Loop::repeat(0.002, static function () use ($done, $deadline): void {
            if ($done() || microtime(true) > $deadline) {
                Loop::stop();
            }
        });
        Loop::run();
        Loop::cancel($check);
        self::assertTrue($done(), 'the condition did not hold within the guard');
    }

    private function runFor(float $seconds): void
    {
        Loop::delay($seconds, static fn() => Loop::stop());
        Loop::run();
    }
}
