<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\IsolatedPool;

use Kiln\Tests\Integration\Isolated\IsolatedTestCase;

/** The php-cgi pool under signals it has no use for, and a pool that stops answering. */
final class PhpCgiSignalsTest extends IsolatedTestCase
{
    /**
     * `systemctl kill -s USR1` signals every process of the service: php-cgi marks a process that gets USR1 as shutting
     * down, and a parent so marked forked children that exited at once, for ever (every .php request then timed out).
     */
    public function testUsr1AndUsr2ToEveryProcessOfTheServerLeaveThePhpCgiPoolServing(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '2']);
        $children = $this->waitForChildren(2);
        [$parent] = $this->phpCgiParents();
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);

        foreach ([SIGUSR1, SIGUSR2] as $signal) {
            foreach ([$server->pid(), ...$server->workerPids(), ...$children] as $pid) {
                posix_kill($pid, $signal);
            }
        }
        $server->waitForLog('/SIGUSR2 ignored/', 5.0);

        for ($i = 1; $i <= 4; $i++) {
            $response = $this->get('/legacy/pid.php', 5.0);
            self::assertSame(200, $response['status'], "request $i after the signals: {$response['body']}");
            self::assertContains((int) $response['body'], $children, 'the same children answer');
        }
        self::assertSame([$parent], $this->phpCgiParents(), 'the same php-cgi parent');
        self::assertTrue($server->isRunning());
        self::assertStringNotContainsString('killed by signal', $server->log());
    }

    /** A parent that lives but whose children take no connection (here: all stopped) is seen, killed and replaced. */
    public function testAPoolThatStopsAnsweringIsReplacedByAFreshOne(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '1', 'KILN_TEST_TIME_LIMIT' => '1']);
        $children = $this->waitForChildren(1);
        [$parent] = $this->phpCgiParents();
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);

        foreach ([$parent, ...$children] as $pid) {
            posix_kill($pid, SIGSTOP);
        }
        // No answer to a probe for 10 s (twice the time limit, at least 10 s), probes every 5 s.
        $server->waitForLog('/php-cgi-\w+#0 \(pid ' . $parent . '\) of the server stopped answering: no answer to a probe for 10 s; killing it/', 25.0);
        self::waitUntil(fn(): bool => substr_count($server->log(), ' is up on ') === 2, 10.0, 'a fresh php-cgi parent up');
        self::assertCount(1, $this->phpCgiParents());
        self::assertNotSame([$parent], $this->phpCgiParents());
        $response = $this->get('/legacy/pid.php', 10.0);
        self::assertSame(200, $response['status'], $response['body']);
        self::assertNotContains((int) $response['body'], $children);
        self::assertFalse(self::isAlive($parent), 'the stopped parent was killed');
    }
}
