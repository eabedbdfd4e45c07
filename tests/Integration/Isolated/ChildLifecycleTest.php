<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Isolated;

/** php-cgi children are started, recycled, replaced and stopped by the supervisor, and never outlive their worker. */
final class ChildLifecycleTest extends IsolatedTestCase
{
    public function testAChildIsReplacedOnceItServedMaxRequestsAndNoRequestFails(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '1', 'KILN_TEST_POOL_MAX_REQUESTS' => '5']);
        $pids = [];
        for ($i = 1; $i <= 12; $i++) {
            $response = $this->get('/legacy/pid.php');
            self::assertSame(200, $response['status'], "request $i: {$response['body']}");
            $pids[] = (int) $response['body'];
        }
        $runs = array_values(array_count_values($pids));
        self::assertSame([5, 5, 2], $runs, 'each child serves exactly 5 requests: ' . implode(' ', $pids));
        self::assertSame(2, substr_count($this->server()->log(), 'is replaced: served 5 requests (--pool-max-requests=5)'));
        self::assertFalse(self::isAlive($pids[0]), 'a recycled child is gone');
    }

    public function testAChildKilledWithSigkillIsReplacedAndRequestsKeepSucceeding(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        [$victim] = $this->waitForChildren(1);
        self::assertSame((string) $victim, $this->get('/legacy/pid.php')['body']);
        // A child that dies within its first second counts as a failed start (backoff); this one lived.
        self::waitUntil(static fn(): bool => self::age($victim) > 1.1, 5.0, 'the child to be older than a second');
        posix_kill($victim, SIGKILL);
        $this->server()->waitForLog("~pid $victim\\) of worker pid \\d+ killed by signal 9 \\(SIGKILL\\); replacing it now~", 5.0);
        $end = microtime(true) + 1.0;
        $served = [];
        while (microtime(true) < $end) {
            $response = $this->get('/legacy/pid.php');
            self::assertSame(200, $response['status'], $response['body']);
            $served[(int) $response['body']] = true;
        }
        self::assertArrayNotHasKey($victim, $served);
        self::assertSame(array_keys($served), $this->phpCgiPids(), 'its one replacement serves');
    }

    public function testAWorkerThatDiesTakesItsChildrenAlongAndItsReplacementGetsFreshOnes(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '2']);
        $children = $this->waitForChildren(2);
        [$worker] = $this->workers();
        posix_kill($worker, SIGKILL);
        self::waitUntil(static fn(): bool => !self::isAlive($children[0]) && !self::isAlive($children[1]), 5.0, 'the dead worker\'s children to end');
        $fresh = $this->waitForChildren(2);
        self::assertSame([], array_intersect($children, $fresh));
        self::assertSame(200, $this->get('/legacy/hello.php')['status']);
    }

    public function testAReloadStartsFreshChildrenAndTheOldOnesEndWithTheirWorker(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        [$old] = $this->waitForChildren(1);
        $server->signal(SIGHUP);
        $server->waitForLog('~reloaded: generation 2 serving~', 10.0);
        self::waitUntil(static fn(): bool => !self::isAlive($old), 5.0, 'the old generation\'s child to end');
        $response = $this->get('/legacy/pid.php');
        self::assertSame(200, $response['status']);
        self::assertNotSame((string) $old, $response['body']);
    }

    public function testChildrenDoNotOutliveASupervisorKilledOutright(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '2']);
        $children = $this->waitForChildren(2);
        $workers = $this->workers();
        posix_kill($server->pid(), SIGKILL);
        // The worker sees its channel close, drains, and ends its children by pid on the way out.
        self::waitUntil(static fn(): bool => array_filter([...$children, ...$workers], self::isAlive(...)) === [], 10.0, 'the worker and its children to end');
        // The killed supervisor left its pid file, status file and socket directory; a new server sweeps the latter.
        $tmp = rtrim(sys_get_temp_dir(), '/');
        @unlink("$tmp/kiln-{$server->host()}-{$server->port()}.pid");
        @unlink("$tmp/kiln-{$server->host()}-{$server->port()}.status.json");
        $dir = "$tmp/kiln-{$server->pid()}-";
        self::assertCount(1, glob($dir . '*') ?: []);
        $server->stop();
        $this->serve();
        $this->waitForChildren(2);
        clearstatcache();
        self::assertSame([], glob($dir . '*') ?: []);
    }

    public function testStoppingTheServerStopsEveryChild(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '2'], ['--workers=2']);
        $children = $this->waitForChildren(4);
        self::assertSame(0, $server->stop());
        self::assertSame([], array_filter($children, self::isAlive(...)));
    }

    /** Seconds since the process started. */
    private static function age(int $pid): float
    {
        $stat = (string) @file_get_contents("/proc/$pid/stat");
        $fields = explode(' ', substr($stat, (int) strrpos($stat, ')') + 2));
        $uptime = (float) explode(' ', (string) file_get_contents('/proc/uptime'))[0];
        return $uptime - (int) ($fields[19] ?? 0) / 100; // starttime in clock ticks (USER_HZ = 100)
    }
}
