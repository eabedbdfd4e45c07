<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * `kill -9` of one process of a server, and what is left afterwards: nothing running, no zombie, the port free
 * (docs/design/029-process-hygiene.md). Where zombies matter the server runs under a parent that makes itself
 * the subreaper and never reaps (tests/Support/non-reaping-parent.php), as a container's init without --init.
 */
final class ProcessHygieneTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/hygiene/app.php';
    private const PARENT = __DIR__ . '/../../Support/non-reaping-parent.php';
    private const DEAF_APP = __DIR__ . '/../../Fixtures/hygiene/deaf-app.php';
    private const KILN = __DIR__ . '/../../../bin/kiln';

    private ?KilnProcess $server = null;

    private ?KilnProcess $next = null;

    /** @var array<int, string> every process the test saw in the server's tree, with its start time: none may outlive the test */
    private array $seen = [];

    /** @var list<string> files to remove */
    private array $files = [];

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
        $this->next?->stop();
        $this->next = null;
        // Only the process seen, not another one given its pid since (a busy machine reuses pids).
        foreach ($this->seen as $pid => $started) {
            if (self::running($pid) && self::startTime($pid) === $started) {
                @posix_kill($pid, SIGKILL);
            }
        }
        foreach ($this->files as $file) {
            @unlink($file);
        }
    }

    /**
     * Records processes to end after the test should they still run.
     *
     * @param list<int> $pids
     * @return list<int> $pids
     */
    private function see(array $pids): array
    {
        foreach ($pids as $pid) {
            $started = self::startTime($pid);
            if ($started !== null && !isset($this->seen[$pid])) {
                $this->seen[$pid] = $started;
            }
        }
        return $pids;
    }

    /** When the process started (field 22 of /proc/PID/stat, in clock ticks since boot); null when it is gone. */
    private static function startTime(int $pid): ?string
    {
        $stat = @file_get_contents("/proc/$pid/stat");
        if ($stat === false || ($close = strrpos($stat, ')')) === false) {
            return null;
        }
        // Fields from the third on follow the command name, which may hold spaces: the 22nd is the 20th of those.
        return explode(' ', substr($stat, $close + 2))[19] ?? null;
    }

    public function testKillingTheSupervisorEndsEveryProcessOfItsTreeAndFreesThePort(): void
    {
        $server = $this->server = KilnProcess::start(self::APP, ['--workers=2', '--task-workers=1']);
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/isolated/pid.php')['status']);
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/fork/pid.php')['status']);
        $this->waitUntil(fn(): bool => \count(array_filter($this->tree($server->pid()), static fn(int $pid): bool => self::title($pid) === 'kiln: process stubborn')) === 1, 'the user process');
        $tree = $this->see($this->tree($server->pid()));
        $kinds = array_map(self::kind(...), $tree);
        foreach (['kiln: supervisor', 'kiln: worker 1', 'kiln: task worker 1', 'kiln: process stubborn', 'php-cgi', 'fork-server.php'] as $kind) {
            self::assertContains($kind, $kinds, 'the tree has every kind of process: ' . implode(', ', $kinds));
        }
        posix_kill($server->pid(), SIGKILL);
        // Nothing is left to reap what ends now: a zombie under PID 1 is the most that may remain.
        $this->waitUntil(static fn(): bool => array_filter($tree, self::running(...)) === [], 'every process of the tree to end', 20.0, static fn(): string => implode("\n", array_map(
            static fn(int $pid): string => "$pid " . self::kind($pid),
            array_filter($tree, self::running(...)),
        )));
        $refused = @stream_socket_client("tcp://127.0.0.1:{$server->port()}", $errno, $error, 2.0);
        self::assertFalse($refused, 'nothing accepts connections on the port any more');
    }

    public function testWhenTheSupervisorIsKilledTheWorkersLetThePortGoAtOnceAndStillAnswerTheRequestsInFlight(): void
    {
        $server = $this->server = KilnProcess::start(self::APP, ['--workers=2']);
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/isolated/pid.php')['status']);
        $this->see($this->tree($server->pid()));
        $client = RawClient::to($server);
        $client->send("GET /isolated/sleep.php?ms=8000 HTTP/1.1\r\nHost: test\r\n\r\n");
        $this->waitUntil(fn(): bool => $this->busyPhpCgi($server->pid()), 'the request to reach php-cgi');
        posix_kill($server->pid(), SIGKILL);
        // Without a supervisor no new worker will ever accept: a client must be refused, not queued for nobody.
        $this->waitUntil(static fn(): bool => @stream_socket_client("tcp://127.0.0.1:{$server->port()}", $errno, $error, 1.0) === false, 'the port to refuse connections while the request is in flight', 5.0);
        self::assertNotSame([], array_filter(array_keys($this->seen), static fn(int $pid): bool => self::running($pid) && str_starts_with(self::title($pid), 'kiln: worker ')), 'a worker still serves the request');
        $response = $client->readResponse(15.0);
        self::assertSame(200, $response['status'] ?? 0, 'the request in flight is answered');
        self::assertStringStartsWith('slept ', $response['body'] ?? '');
    }

    public function testAPhpCgiParentKilledLeavesNoneOfItsChildrenRunningOrAZombieAndTheNextRequestIsServed(): void
    {
        $server = $this->underNonReapingParent();
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/isolated/pid.php')['status']);
        $supervisor = $this->supervisor($server);
        $this->waitUntil(fn(): bool => \count($this->phpCgiChildren($supervisor)) === 2, 'two php-cgi children');
        $parent = array_values(array_filter($this->children($supervisor), static fn(int $pid): bool => self::kind($pid) === 'php-cgi'))[0];
        $children = $this->phpCgiChildren($supervisor);
        $this->see([$parent, ...$children]);
        posix_kill($parent, SIGKILL);
        $this->waitUntil(static fn(): bool => array_filter([$parent, ...$children], self::exists(...)) === [], 'the php-cgi parent and its children gone, reaped', 10.0, fn(): string => $this->describe([$parent, ...$children]));
        $this->waitUntil(static function () use ($server, $children): bool {
            $response = HttpClient::get($server->baseUrl() . '/isolated/pid.php');
            return $response['status'] === 200 && !\in_array((int) $response['body'], $children, true);
        }, 'a request served by a new php-cgi child');
        self::assertSame([], $this->zombiesUnder($server->pid()), 'no zombie under the non-reaping parent');
    }

    public function testAForkServerKilledDuringARequestIsReapedByItsWorkerAndItsChildByTheSupervisor(): void
    {
        $server = $this->underNonReapingParent();
        $supervisor = $this->supervisor($server);
        $client = RawClient::to($server);
        $client->send("GET /fork/sleep.php?ms=1500 HTTP/1.1\r\nHost: test\r\n\r\n");
        $forkServer = $this->forkServerWithAChild($supervisor);
        $child = $this->children($forkServer)[0];
        $this->see([$forkServer, $child]);
        posix_kill($forkServer, SIGKILL);
        $this->waitUntil(static fn(): bool => !self::exists($forkServer), 'the fork server reaped, with no request after it', 10.0, fn(): string => $this->describe([$forkServer]));
        $this->waitUntil(static fn(): bool => !self::exists($child), 'its child (orphaned, finishing its request) reaped', 10.0, fn(): string => $this->describe([$child]));
        $client->close();
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/fork/pid.php')['status'], 'a new fork server serves');
        self::assertSame([], $this->zombiesUnder($server->pid()), 'no zombie under the non-reaping parent');
    }

    /** Whether a php-cgi child of the server is running a script (its parent's other children idle in accept). */
    private function busyPhpCgi(int $supervisor): bool
    {
        foreach ($this->phpCgiChildren($supervisor) as $pid) {
            if (str_contains((string) @file_get_contents("/proc/$pid/wchan"), 'nanosleep')) {
                return true;
            }
        }
        return false;
    }

    public function testAnOrphanTheSupervisorAdoptedThatStillRunsWhenTheServerStopsEndsWithIt(): void
    {
        $server = $this->underNonReapingParent();
        $client = RawClient::to($server);
        $client->send("GET /fork/sleep.php?ms=60000 HTTP/1.1\r\nHost: test\r\n\r\n");
        $forkServer = $this->forkServerWithAChild($this->supervisor($server));
        $child = $this->children($forkServer)[0];
        $this->see([$forkServer, $child]);
        posix_kill($forkServer, SIGKILL);
        $this->waitUntil(fn(): bool => \in_array($child, $this->children($this->supervisor($server)), true), 'the supervisor to adopt the fork child', 10.0, fn(): string => $this->describe([$child]));
        $client->close();
        self::assertSame(0, $server->stop(10.0), 'the server stops');
        $this->waitUntil(static fn(): bool => !self::running($child), 'the adopted fork child to end with the server', 5.0, fn(): string => $this->describe([$child]));
    }

    public function testProcessesARequestLeftInTheBackgroundAreAskedToExitWhenTheServerStopsAndKilledOnlyIfTheyDoNot(): void
    {
        $server = $this->server = KilnProcess::start(self::APP, ['--workers=1', '--log-level=debug']);
        $polite = $this->files[] = sys_get_temp_dir() . '/kiln-test-detached-' . bin2hex(random_bytes(4));
        $deaf = $this->files[] = $polite . '-deaf';
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/detach?mode=term&marker=' . rawurlencode($polite))['status']);
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/detach?mode=deaf&marker=' . rawurlencode($deaf))['status']);
        $pids = [];
        $this->waitUntil(function () use ($server, $polite, $deaf, &$pids): bool {
            $pids = array_map(static fn(string $file): int => (int) @file_get_contents($file), [$polite, $deaf]);
            $this->see(array_values(array_filter($pids)));
            return array_diff($pids, $this->children($server->pid())) === [];
        }, 'both detached processes to be adopted by the supervisor', 15.0, fn(): string => $this->describe($pids));
        self::assertSame(0, $server->stop(15.0), 'the server stops, without waiting on the process that ignores SIGTERM for ever');
        self::assertSame("{$pids[0]} term", file_get_contents($polite), 'the adopted process that handles SIGTERM was asked to exit, and did');
        $this->waitUntil(static fn(): bool => !self::exists($pids[1]), 'the adopted process that ignores SIGTERM killed and reaped', 5.0, fn(): string => $this->describe([$pids[1]]));
        self::assertStringContainsString("adopted process(es) {$pids[1]} still running after SIGTERM: SIGKILL", $server->log());
    }

    public function testAUserProcessThatOutlivesAKilledSupervisorWithoutFfiDoesNotKeepTheNextServerFromThePidFile(): void
    {
        $pidFile = $this->files[] = sys_get_temp_dir() . '/kiln-test-hygiene-' . bin2hex(random_bytes(4)) . '.pid';
        $server = $this->server = KilnProcess::launch([PHP_BINARY, '-d', 'ffi.enable=0', self::KILN, 'serve', self::APP, '--listen=127.0.0.1:0', '--workers=1', '--task-workers=1', "--pid-file=$pidFile"]);
        $this->outlivesItsSupervisorAndTheNextServerStarts($server, 'kiln: process stubborn', $pidFile);
    }

    public function testAUserProcessThatIgnoresSigtermDoesNotKeepTheNextServerFromThePidFile(): void
    {
        $pidFile = $this->files[] = sys_get_temp_dir() . '/kiln-test-hygiene-' . bin2hex(random_bytes(4)) . '.pid';
        $server = $this->server = KilnProcess::start(self::DEAF_APP, ['--workers=1', "--pid-file=$pidFile"]);
        $this->outlivesItsSupervisorAndTheNextServerStarts($server, 'kiln: process deaf', $pidFile);
    }

    private function outlivesItsSupervisorAndTheNextServerStarts(KilnProcess $server, string $title, string $pidFile): void
    {
        $user = 0;
        $this->waitUntil(function () use ($server, $title, &$user): bool {
            foreach ($this->see($this->tree($server->pid())) as $pid) {
                if (self::title($pid) === $title) {
                    $user = $pid;
                }
            }
            return $user !== 0;
        }, "the user process ($title)");
        // While the supervisor runs, the file is its own: the user process let go of its copy of the lock, not of the lock.
        [$code, , $stderr] = KilnProcess::run(['serve', self::APP, '--listen=127.0.0.1:0', '--workers=1', "--pid-file=$pidFile"], 10.0);
        self::assertSame(1, $code, "a second server is refused while the first runs: $stderr");
        self::assertStringContainsString("Pid file $pidFile is held by running process {$server->pid()}", $stderr);
        $tree = $this->see($this->tree($server->pid()));
        posix_kill($server->pid(), SIGKILL);
        self::assertNotNull($server->waitForExit(5.0), 'the supervisor is gone after SIGKILL');
        $this->waitUntil(static fn(): bool => array_values(array_filter($tree, self::running(...))) === [$user], 'every process but the user process to end', 15.0, fn(): string => $this->describe($tree));
        $next = $this->next = KilnProcess::start(self::APP, ['--workers=1', "--pid-file=$pidFile"]);
        self::assertTrue(self::running($user), 'the user process still runs: the next server started beside it');
        self::assertSame((string) $next->pid(), trim((string) file_get_contents($pidFile)));
        self::assertSame(200, HttpClient::get($next->baseUrl() . '/fork-server-pid')['status']);
    }

    private function forkServerWithAChild(int $supervisor): int
    {
        $forkServer = 0;
        $this->waitUntil(function () use ($supervisor, &$forkServer): bool {
            foreach ($this->tree($supervisor) as $pid) {
                if (self::kind($pid) === 'fork-server.php' && $this->children($pid) !== []) {
                    $forkServer = $pid;
                    return true;
                }
            }
            return false;
        }, 'the fork server and its child running the request');
        return $forkServer;
    }

    private function underNonReapingParent(): KilnProcess
    {
        return $this->server = KilnProcess::launch([PHP_BINARY, self::PARENT, 'serve', self::APP, '--listen=127.0.0.1:0', '--workers=1', '--log-level=debug']);
    }

    private function supervisor(KilnProcess $server): int
    {
        $supervisors = array_values(array_filter($this->children($server->pid()), static fn(int $pid): bool => self::kind($pid) === 'kiln: supervisor'));
        self::assertCount(1, $supervisors, 'the supervisor under the non-reaping parent');
        return $supervisors[0];
    }

    /** @return list<int> */
    private function phpCgiChildren(int $supervisor): array
    {
        $children = [];
        foreach ($this->children($supervisor) as $pid) {
            if (self::kind($pid) === 'php-cgi') {
                array_push($children, ...array_filter($this->children($pid), self::running(...)));
            }
        }
        return $children;
    }

    /** @return list<int> the zombies whose parent is $pid */
    private function zombiesUnder(int $pid): array
    {
        return array_values(array_filter($this->children($pid), static fn(int $child): bool => self::exists($child) && !self::running($child)));
    }

    /** @return list<int> $pid and every process below it */
    private function tree(int $pid): array
    {
        $pids = [$pid];
        foreach ($this->children($pid) as $child) {
            array_push($pids, ...$this->tree($child));
        }
        return $pids;
    }

    /** @return list<int> */
    private function children(int $pid): array
    {
        $children = [];
        foreach (glob("/proc/$pid/task/*/children") ?: [] as $file) {
            foreach (preg_split('/\s+/', trim((string) @file_get_contents($file))) ?: [] as $child) {
                if (ctype_digit($child)) {
                    $children[] = (int) $child;
                }
            }
        }
        return $children;
    }

    /** @param list<int> $pids */
    private function describe(array $pids): string
    {
        $lines = [];
        foreach ($pids as $pid) {
            $stat = @file_get_contents("/proc/$pid/stat");
            $lines[] = $stat === false ? "$pid gone" : "$pid " . self::kind($pid) . ': ' . $stat;
        }
        return implode("\n", $lines) . "\nlog:\n" . $this->server?->log();
    }

    /** The process title of a Kiln process, `php-cgi`, `fork-server.php`, or its program. */
    private static function kind(int $pid): string
    {
        $args = explode("\0", rtrim((string) @file_get_contents("/proc/$pid/cmdline"), "\0"));
        if (str_starts_with($args[0], 'kiln: ')) {
            return self::title($pid);
        }
        foreach ($args as $arg) {
            if (str_ends_with($arg, '/fork-server.php')) {
                return 'fork-server.php';
            }
        }
        return basename($args[0]);
    }

    private static function title(int $pid): string
    {
        return rtrim((string) @file_get_contents("/proc/$pid/cmdline"), "\0 ");
    }

    /** Whether the process exists at all, zombie or not. */
    private static function exists(int $pid): bool
    {
        return file_exists("/proc/$pid/stat");
    }

    /** Whether the process exists and is not a zombie. */
    private static function running(int $pid): bool
    {
        $stat = @file_get_contents("/proc/$pid/stat");
        if ($stat === false || ($close = strrpos($stat, ')')) === false) {
            return false;
        }
        return ($stat[$close + 2] ?? 'Z') !== 'Z';
    }

    /**
     * @param \Closure(): bool $condition
     * @param (\Closure(): string)|null $state what to show when it times out
     */
    private function waitUntil(\Closure $condition, string $what, float $timeout = 15.0, ?\Closure $state = null): void
    {
        $deadline = microtime(true) + $timeout;
        while (!$condition()) {
            if (microtime(true) > $deadline) {
                self::fail("timed out after $timeout s waiting for: $what" . ($state === null ? '' : "\n" . $state()));
            }
            usleep(20_000);
        }
    }
}
