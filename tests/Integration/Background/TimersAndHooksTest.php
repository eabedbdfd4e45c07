<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Background;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * App timers and worker hooks on a real server: hooks on start, recycle, reload and stop; a node-wide timer
 * firing on exactly one worker across a SIGKILL of that worker and across a reload. Waits poll the events
 * file with generous timeouts; nothing asserts a duration.
 */
final class TimersAndHooksTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/background/app.php';

    private string $events = '';

    private ?KilnProcess $server = null;

    protected function setUp(): void
    {
        $this->events = (string) tempnam(sys_get_temp_dir(), 'kiln-events-');
    }

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
        @unlink($this->events);
    }

    public function testStartHooksRunInEveryWorkerAndStopHooksWhenTheServerStops(): void
    {
        $server = $this->start(['--workers=2']);
        $starts = $this->waitFor(static fn(array $e): bool => \count(self::kind($e, 'start')) === 2, 'two start hooks');
        $pids = array_map(static fn(array $f): int => (int) $f[2], self::kind($starts, 'start'));
        sort($pids);
        self::assertSame([1, 2], self::numbers($starts, 'start'));
        self::assertSame($pids, array_values(array_intersect($pids, $server->workerPids())));
        $server->waitForLog('/timer after 0.3 s failed/', 10.0);

        self::assertSame(0, $server->stop());
        $this->server = null;
        $stopped = array_map(static fn(array $f): int => (int) $f[2], self::kind($this->read(), 'stop'));
        sort($stopped);
        self::assertSame($pids, $stopped, 'each worker ran its stop hook');
        self::assertStringContainsString('onWorkerStart failed: RuntimeException: start hook boom', $server->log());
        self::assertStringContainsString('timer after 0.3 s failed: RuntimeException: timer boom', $server->log());
        self::assertStringNotContainsString('cancelled timer ran', (string) file_get_contents($this->events));
    }

    public function testARecycledWorkerRunsItsStopHookAndItsReplacementItsStartHook(): void
    {
        $server = $this->start(['--workers=1', '--max-requests=3']);
        $first = $this->waitFor(static fn(array $e): bool => \count(self::kind($e, 'start')) === 1, 'the start hook');
        $old = self::kind($first, 'start')[0][2];
        for ($i = 0; $i < 3; $i++) {
            self::assertSame(200, HttpClient::get($server->baseUrl() . '/pid')['status']);
        }
        $events = $this->waitFor(static fn(array $e): bool => \count(self::kind($e, 'stop')) === 1 && \count(self::kind($e, 'start')) === 2, 'recycle hooks');
        self::assertSame($old, self::kind($events, 'stop')[0][2], 'the recycled worker ran its stop hook');
        self::assertNotSame($old, self::kind($events, 'start')[1][2]);
        self::assertSame('1', self::kind($events, 'start')[1][1], 'the replacement keeps the number');
    }

    public function testAReloadRunsStopHooksInTheOldWorkersAndStartHooksInTheNew(): void
    {
        $server = $this->start(['--workers=2']);
        $this->waitFor(static fn(array $e): bool => \count(self::kind($e, 'start')) === 2, 'two start hooks');
        $server->signal(SIGHUP);
        $events = $this->waitFor(static fn(array $e): bool => \count(self::kind($e, 'start')) === 4 && \count(self::kind($e, 'stop')) === 2, 'reload hooks', 20.0);
        $old = array_map(static fn(array $f): string => $f[2], \array_slice(self::kind($events, 'start'), 0, 2));
        $stopped = array_map(static fn(array $f): string => $f[2], self::kind($events, 'stop'));
        sort($old);
        sort($stopped);
        self::assertSame($old, $stopped);
        self::assertSame([1, 1, 2, 2], self::numbers($events, 'start'));
    }

    public function testANodeWideTimerFiresOnOneWorkerAcrossAKillAndAReload(): void
    {
        $server = $this->start(['--workers=2']);
        $first = $this->tickerAfter(0, 'the first ticks');
        self::assertContains($first, $server->workerPids());

        posix_kill($first, SIGKILL);
        $mark = \count(self::kind($this->read(), 'tick'));
        $second = $this->tickerAfter($mark, 'ticks from another worker', exclude: $first);

        $server->signal(SIGHUP);
        $server->waitForLog('/reloaded: generation 2 serving/', 20.0);
        $mark = \count(self::kind($this->read(), 'tick'));
        $third = $this->tickerAfter($mark, 'ticks after the reload', exclude: $second);
        // Let it run a while, then check the whole history: owners follow one another, never interleave.
        $this->waitFor(static fn(array $e): bool => \count(self::kind($e, 'tick')) >= $mark + 15, 'more ticks');
        $owners = [];
        foreach (self::kind($this->read(), 'tick') as $fields) {
            if ($owners === [] || end($owners) !== (int) $fields[1]) {
                $owners[] = (int) $fields[1];
            }
        }
        self::assertSame($owners, array_values(array_unique($owners)), 'a worker that lost the timer never fired it again: ' . implode(' ', $owners));
        self::assertSame([$first, $second], \array_slice($owners, 0, 2));
        self::assertSame($third, end($owners));
        self::assertContains($third, $server->workerPids());
        // The node-wide one-shot ran once, across the kill, the replacement and the reload.
        self::assertCount(1, self::kind($this->read(), 'once'), 'afterOnNode() ran once for the node');
    }

    /** Waits for ticks past the first $mark from one pid (not $exclude) and returns it. */
    private function tickerAfter(int $mark, string $what, ?int $exclude = null): int
    {
        $events = $this->waitFor(static function (array $e) use ($mark, $exclude): bool {
            $ticks = \array_slice(self::kind($e, 'tick'), $mark);
            $last = \array_slice($ticks, -3);
            return \count($last) === 3 && \count(array_unique(array_column($last, 1))) === 1 && (int) $last[0][1] !== $exclude;
        }, $what, 20.0);
        $ticks = self::kind($events, 'tick');
        return (int) $ticks[\count($ticks) - 1][1];
    }

    /** @param list<string> $args */
    private function start(array $args): KilnProcess
    {
        return $this->server = KilnProcess::start(self::APP, $args, ['KILN_TEST_EVENTS' => $this->events]);
    }

    /**
     * @param \Closure(list<list<string>>): bool $done
     * @return list<list<string>>
     */
    private function waitFor(\Closure $done, string $what, float $timeout = 15.0): array
    {
        $deadline = microtime(true) + $timeout;
        while (true) {
            $events = $this->read();
            if ($done($events)) {
                return $events;
            }
            if (microtime(true) > $deadline) {
                self::fail("timed out waiting for $what; events:\n" . file_get_contents($this->events) . "\nlog:\n" . $this->server?->log());
            }
            usleep(50_000);
        }
    }

    /** @return list<list<string>> */
    private function read(): array
    {
        $lines = array_filter(explode("\n", (string) file_get_contents($this->events)));
        return array_values(array_map(static fn(string $line): array => explode(' ', $line), $lines));
    }

    /**
     * @param list<list<string>> $events
     * @return list<list<string>>
     */
    private static function kind(array $events, string $kind): array
    {
        return array_values(array_filter($events, static fn(array $fields): bool => $fields[0] === $kind));
    }

    /**
     * @param list<list<string>> $events
     * @return list<int>
     */
    private static function numbers(array $events, string $kind): array
    {
        $numbers = array_map(static fn(array $f): int => (int) $f[1], self::kind($events, $kind));
        sort($numbers);
        return $numbers;
    }
}
