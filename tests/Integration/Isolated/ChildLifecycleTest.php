<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Isolated;

use Kiln\Tests\Support\RawClient;

/**
 * The server's php-cgi pool (one parent, its children) is started and stopped by the supervisor; php-cgi
 * recycles and replaces children; nothing of it outlives the server, however it ends.
 */
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
        self::waitUntil(static fn(): bool => !self::isAlive($pids[0]), 3.0, 'the recycled child to be gone');
        self::assertCount(1, $this->phpCgiParents(), 'one parent all along');
    }

    public function testAChildKilledWithSigkillIsReplacedByItsParentAndRequestsKeepSucceeding(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        [$victim] = $this->waitForChildren(1);
        [$parent] = $this->phpCgiParents();
        self::assertSame((string) $victim, $this->get('/legacy/pid.php')['body']);
        posix_kill($victim, SIGKILL);
        self::waitUntil(fn(): bool => !self::isAlive($victim) && \count($this->phpCgiPids()) === 1, 5.0, 'a fresh child in its place');
        $end = microtime(true) + 1.0;
        $served = [];
        while (microtime(true) < $end) {
            $response = $this->get('/legacy/pid.php');
            self::assertSame(200, $response['status'], $response['body']);
            $served[(int) $response['body']] = true;
        }
        self::assertArrayNotHasKey($victim, $served);
        self::assertSame(array_keys($served), $this->phpCgiPids(), 'its one replacement serves');
        self::assertSame([$parent], $this->phpCgiParents(), 'the same parent');
    }

    public function testAWorkerThatDiesLeavesTheServersPoolToItsReplacementWithNoProcessLeftOver(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '2']);
        $children = $this->waitForChildren(2);
        $parents = $this->phpCgiParents();
        [$worker] = $this->workers();
        posix_kill($worker, SIGKILL);
        self::waitUntil(fn(): bool => \count($this->workers()) === 1 && $this->workers() !== [$worker], 10.0, 'a new worker');
        self::assertSame(200, $this->get('/legacy/hello.php')['status']);
        self::assertSame($parents, $this->phpCgiParents(), 'the pool is the server\'s: it stays');
        self::assertEqualsCanonicalizing($children, $this->phpCgiPids(), 'and so do its children, and no more');
    }

    public function testAReloadStartsAFreshParentAndTheOldOneEndsWithItsChildrenOnceItsRequestEnded(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        [$oldChild] = $this->waitForChildren(1);
        [$oldParent] = $this->phpCgiParents();
        $running = RawClient::to($server);
        $running->send("GET /legacy/sleep.php?ms=1500 HTTP/1.1\r\nHost: test\r\n\r\n");
        usleep(300_000);
        $server->signal(SIGHUP);
        $server->waitForLog('~reloaded: generation 2 serving~', 10.0);
        $response = $this->get('/legacy/pid.php');
        self::assertSame(200, $response['status']);
        self::assertNotSame((string) $oldChild, $response['body'], 'the new generation uses the new parent');
        $answer = $running->readResponse(10.0);
        self::assertSame(200, $answer['status'] ?? 0, 'the request in flight to the old parent is answered');
        self::assertSame("slept $oldChild", $answer['body'] ?? '');
        $running->close();
        self::waitUntil(static fn(): bool => !self::isAlive($oldParent) && !self::isAlive($oldChild), 10.0, 'the old parent and its child to end');
        self::assertCount(1, $this->phpCgiParents());
        self::assertCount(1, $this->phpCgiPids());
    }

    public function testChildrenDoNotOutliveASupervisorKilledOutright(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '2']);
        $children = $this->waitForChildren(2);
        $parents = $this->phpCgiParents();
        $workers = $this->workers();
        posix_kill($server->pid(), SIGKILL);
        // The worker sees its channel close, drains, and ends the pool's process group on the way out.
        self::waitUntil(static fn(): bool => array_filter([...$children, ...$parents, ...$workers], self::isAlive(...)) === [], 10.0, 'the worker, the parent and its children to end');
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

    public function testStoppingTheServerStopsTheParentAndEveryChild(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '2'], ['--workers=2']);
        $children = $this->waitForChildren(2);
        $parents = $this->phpCgiParents();
        self::assertCount(1, $parents, 'one pool for both workers');
        self::assertSame(0, $server->stop());
        self::assertSame([], array_filter([...$children, ...$parents], self::isAlive(...)));
    }
}
