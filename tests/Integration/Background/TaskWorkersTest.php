<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Background;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\MariaDbServer;
use Kiln\Tests\Support\PeerProcess;
use PHPUnit\Framework\TestCase;

/**
 * `--task-workers` on a real server: concurrency, what cannot be sent, time limits, a task worker killed
 * mid-call, a full queue, a blocking PDO query, a sequential-tier script, and the app's user process. Bounds
 * on durations are wide (the machine is shared); the orderings asserted (a request answered while another
 * still waits) do not depend on speed.
 */
final class TaskWorkersTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/tasks/app.php';

    private string $events = '';

    private ?KilnProcess $server = null;

    protected function setUp(): void
    {
        $this->events = (string) tempnam(sys_get_temp_dir(), 'kiln-task-events-');
    }

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
        @unlink($this->events);
    }

    public function testTwentyTasksOfOneSecondOnFourTaskWorkersTakeAboutFiveSecondsWhileHelloStaysFast(): void
    {
        $server = $this->start(['--workers=1', '--task-workers=4']);
        $batch = $this->send('/batch?n=20&s=1');
        $answeredWhileBatchRan = 0;
        for ($i = 0; $i < 3; $i++) {
            $hello = HttpClient::get($server->baseUrl() . '/hello', [], 3.0);
            self::assertSame(200, $hello['status']);
            self::assertSame('Hello, World!', $hello['body']);
            $answeredWhileBatchRan += $batch->answered() ? 0 : 1;
            usleep(100_000);
        }
        $response = $batch->receive(30.0);
        $elapsed = microtime(true) - $batch->sentAt;

        self::assertSame(200, $response['status'], $response['body']);
        self::assertSame(3, $answeredWhileBatchRan, 'the worker answered /hello while its handler waited for the tasks');
        self::assertCount(4, self::list(self::json($response['body'])['pids']), 'all four task workers ran tasks');
        self::assertGreaterThan(4.0, $elapsed, 'five rounds of four one-second tasks');
        self::assertLessThan(10.0, $elapsed, 'on one task worker this would take 20 s');
    }

    public function testResultsFailuresAndWhatCannotBeSentAreReportedAtTheCall(): void
    {
        $server = $this->start(['--workers=1', '--task-workers=1']);

        self::assertSame(['sum' => 42], self::json(HttpClient::get($server->baseUrl() . '/add')['body']));
        self::assertSame([
            'error' => 'ValueError',
            'message' => 'task(add): argument 1 cannot be sent to a task worker: it holds a Closure',
        ], self::json(HttpClient::get($server->baseUrl() . '/closure')['body']));
        $failed = self::json(HttpClient::get($server->baseUrl() . '/fail')['body']);
        self::assertSame('Kiln\Server\Task\TaskFailedException', $failed['error']);
        self::assertStringContainsString('task(TaskJobs::fail) failed: DomainException: the task said no', self::text($failed['message']));

        $script = HttpClient::get($server->baseUrl() . '/script', [], 10.0);
        self::assertSame(200, $script['status']);
        self::assertMatchesRegularExpression('/^task worker \d+ served script \d+$/', $script['body'], 'a sequential-tier script ran a task');
    }

    public function testATaskPastItsTimeLimitFailsAndItsTaskWorkerIsReplaced(): void
    {
        $server = $this->start(['--workers=1', '--task-workers=1']);
        // The task worker is up (it loaded the app): the one-second limit is then spent in the task, not in the queue.
        self::assertSame(['sum' => 42], self::json(HttpClient::get($server->baseUrl() . '/add', [], 20.0)['body']));

        $outcome = self::json(HttpClient::get($server->baseUrl() . '/timeout', [], 15.0)['body']);

        self::assertSame('Kiln\Server\Task\TaskTimeoutException', $outcome['error']);
        $pid = $this->runningPid();
        self::assertStringContainsString("did not finish within 1 s; task worker pid $pid was killed", self::text($outcome['message']));
        $server->waitForLog("/task worker 1 \\(pid $pid\\) killed by signal 9/", 10.0);
        self::assertSame(['sum' => 42], self::json(HttpClient::get($server->baseUrl() . '/add', [], 10.0)['body']), 'its replacement serves');
    }

    public function testATaskWorkerKilledMidCallFailsTheCallAndIsReplaced(): void
    {
        $server = $this->start(['--workers=1', '--task-workers=1']);
        $long = $this->send('/long?s=30');
        $pid = $this->waitForRunning();

        posix_kill($pid, SIGKILL);
        $outcome = self::json($long->receive(15.0)['body']);

        self::assertSame('Kiln\Server\Task\TaskCrashedException', $outcome['error']);
        self::assertStringContainsString("task worker pid $pid ended during the call", self::text($outcome['message']));
        self::assertSame(['sum' => 42], self::json(HttpClient::get($server->baseUrl() . '/add', [], 10.0)['body']), 'its replacement serves');
    }

    public function testAFullQueueFailsTheCallAtOnceAndARequestGets503(): void
    {
        $server = $this->start(['--workers=1', '--task-workers=1', '--task-queue=2']);

        // The queue is the task socket's backlog (2), and a task worker is another process: while it is idle it may
        // take a call between two of a burst's connects and make room for one more. So each burst below is made while
        // the task worker runs a long call: the queue then holds exactly two.
        $busy = $this->send('/long?s=3');
        $this->waitForRunning();
        $burst = self::json(HttpClient::get($server->baseUrl() . '/burst?n=6&s=1', [], 20.0)['body']);
        $outcomes = self::list($burst['outcomes']);
        $refused = array_filter($outcomes, static fn(mixed $o): bool => $o === 'Kiln\Server\Task\TaskQueueFullException');
        self::assertCount(4, $refused, 'two wait, the other four are refused at once: ' . (json_encode($burst) ?: ''));
        self::assertSame([0, 1], array_keys(array_filter($outcomes, 'is_int')));
        self::assertSame(200, $busy->receive(20.0)['status']);

        // A request whose handler lets the failure escape gets a 503: /overfill fills the queue and calls once more in
        // the same turn.
        $busy = $this->send('/long?s=4');
        $this->waitForRunning(2);
        $refusal = HttpClient::get($server->baseUrl() . '/overfill?n=6&s=1', [], 20.0);
        self::assertSame(503, $refusal['status'], $refusal['body']);
        self::assertSame('1', $refusal['headers']['retry-after'] ?? null);
        self::assertSame(200, $busy->receive(20.0)['status']);
        $deadline = microtime(true) + 20.0;
        while (self::json(HttpClient::get($server->baseUrl() . '/inflight')['body'])['inflight'] > 0) {
            self::assertLessThan($deadline, microtime(true), 'the calls that filled the queue ran');
            usleep(100_000);
        }
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/sleep?s=0.01', [], 10.0)['status'], 'the queue drained');
    }

    public function testABlockingPdoQueryInATaskLeavesTheWorkerServing(): void
    {
        $db = MariaDbServer::start();
        $db->createDatabase('kiln_tasks', 'tasks', 'task-secret');
        $server = $this->start(['--workers=1', '--task-workers=2'], [
            'KILN_TEST_DSN' => "mysql:host={$db->host()};port={$db->port()};dbname=kiln_tasks",
            'KILN_TEST_DB_USER' => 'tasks',
            'KILN_TEST_DB_PASSWORD' => 'task-secret',
        ]);

        $query = $this->send('/db?s=3');
        usleep(300_000);
        for ($i = 0; $i < 3; $i++) {
            self::assertSame(200, HttpClient::get($server->baseUrl() . '/hello', [], 3.0)['status']);
            self::assertFalse($query->answered(), "the query (SLEEP(3)) still runs while /hello #$i is answered");
        }
        $response = $query->receive(30.0);

        self::assertSame(200, $response['status'], $response['body']);
        self::assertSame(['result' => 'slept'], self::json($response['body']));
    }

    public function testAUserProcessIsStartedAgainAfterItDiesAndStoppedWithTheServer(): void
    {
        $server = $this->start(['--workers=1']);
        $first = $this->waitForTicker();
        self::assertContains($first, $server->workerPids());

        posix_kill($first, SIGKILL);
        $second = $this->waitForTicker($first);
        self::assertContains($second, $server->workerPids());
        $server->waitForLog("/process ticker \\(pid $first\\) killed by signal 9/", 5.0);

        self::assertSame(0, $server->stop());
        $this->server = null;
        self::assertFalse(posix_kill($second, 0), 'the user process ended with the server');
    }

    /**
     * What a task worker or a user process writes to its standard error (PHP's warnings, error_log(), STDERR) is filed
     * in the error log as a worker's is: an entry of its format, with a level and the process's key and pid.
     */
    public function testWhatTaskWorkersAndUserProcessesWriteToStandardErrorIsFiledInTheJsonLog(): void
    {
        $server = $this->start(['--workers=1', '--task-workers=1', '--error-log-format=json']);
        $task = self::number(self::json(HttpClient::get($server->baseUrl() . '/complain?mark=t1', [], 10.0)['body'])['pid']);
        $ticker = $this->waitForTicker();
        $server->waitForLog('/a task wrote to STDERR t1/', 5.0);
        $server->waitForLog("/ticker $ticker started/", 5.0);

        $entries = [];
        foreach (explode("\n", trim($server->log())) as $line) {
            $entry = json_decode($line, true);
            self::assertIsArray($entry, "every line of the log is a JSON object, not: $line");
            $entries[] = $entry;
        }
        foreach ([
            ['PHP Warning:  a task warning t1 in ', 'task worker 1', $task],
            ['a task error_log t1', 'task worker 1', $task],
            ['a task wrote to STDERR t1', 'task worker 1', $task],
            ["ticker $ticker started", 'process ticker', $ticker],
        ] as [$needle, $source, $pid]) {
            $found = array_values(array_filter($entries, static fn(array $e): bool => str_contains((string) ($e['message'] ?? ''), $needle)));
            self::assertCount(1, $found, "one entry says '$needle'");
            self::assertSame(['warning', $source, $pid], [$found[0]['level'] ?? null, $found[0]['source'] ?? null, $found[0]['pid'] ?? null], $needle);
        }
    }

    public function testATaskWorkerIsRecycledByMaxRequestsAndAReloadReplacesTaskWorkersAndUserProcesses(): void
    {
        $server = $this->start(['--workers=1', '--task-workers=1', '--max-requests=2']);
        $pid = fn(): int => self::number(self::json(HttpClient::get($server->baseUrl() . '/sleep?s=0.01', [], 10.0)['body'])['pid']);

        $first = $pid();
        self::assertSame($first, $pid());
        $third = $pid();
        self::assertNotSame($first, $third, 'replaced after two calls');

        $ticker = $this->waitForTicker();
        $server->signal(SIGHUP);
        $server->waitForLog('/reloaded: generation 2 serving/', 20.0);
        self::assertNotSame($third, $pid(), 'a reload brings fresh task workers');
        self::assertNotSame($ticker, $this->waitForTicker($ticker), 'and starts the user process again');
    }

    /**
     * The supervisor asks a child for the names of the user processes on a reload: while that child loads an app
     * that takes 3 s to load, the supervisor still answers its admin listener (and relays the workers' bus).
     */
    public function testAReloadOfAnAppThatLoadsSlowlyDoesNotHoldTheSupervisor(): void
    {
        $slow = $this->events . '.slow';
        $server = $this->start(['--workers=1', '--admin-listen=127.0.0.1:0'], ['KILN_TEST_SLOW_LOAD' => $slow]);
        $line = $server->waitForLog('~admin listener on http://127\.0\.0\.1:\d+~');
        $admin = preg_match('~(http://127\.0\.0\.1:\d+)~', $line, $m) === 1 ? $m[1] : self::fail("no admin address in: $line");
        $ticker = $this->waitForTicker();
        touch($slow);
        try {
            $server->signal(SIGHUP);
            usleep(300_000); // the inspecting child is loading the app now
            $start = microtime(true);
            $health = HttpClient::get("$admin/health", [], 10.0);
            $took = microtime(true) - $start;
            self::assertSame(200, $health['status']);
            self::assertLessThan(1.5, $took, 'the supervisor answered while the app was still loading');
        } finally {
            @unlink($slow);
        }
        self::assertNotSame($ticker, $this->waitForTicker($ticker), 'the user process started again with the new code');
    }

    /**
     * The child that loads the app to name its user processes may leave a program running that holds its answer's
     * socket: the answer is taken once the child is gone, and the user processes start (they waited 30 s, then never).
     */
    public function testTheUserProcessesStartWhenTheInspectingChildLeftAProgramRunning(): void
    {
        $this->start(['--workers=1'], ['KILN_TEST_INSPECTION_LEAVES' => '1']);
        self::assertGreaterThan(0, $this->waitForTicker());
    }

    /** A supervisor killed with SIGKILL cannot remove its task socket's directory: the next server to start does. */
    public function testTheTaskSocketDirectoryOfAKilledSupervisorIsRemovedByTheNextServer(): void
    {
        $temp = PeerProcess::tempDir('kiln-tasks-tmp');
        try {
            $killed = $this->start(['--workers=1', '--task-workers=1'], ['TMPDIR' => $temp]);
            $left = glob("$temp/kiln-tasks-{$killed->pid()}-*") ?: [];
            self::assertCount(1, $left, 'the task socket is in TMPDIR');
            posix_kill($killed->pid(), SIGKILL);
            self::assertNotNull($killed->waitForExit(10.0));
            $this->server = null;
            $running = "$temp/kiln-tasks-" . getmypid() . '-0123abcd'; // a supervisor that runs: this test's process
            mkdir($running);

            $next = $this->start(['--workers=1', '--task-workers=1'], ['TMPDIR' => $temp]);
            self::assertDirectoryDoesNotExist($left[0], 'the killed supervisor\'s directory was removed');
            self::assertDirectoryExists($running, 'the directory of a supervisor that runs is left alone');
            self::assertCount(1, glob("$temp/kiln-tasks-{$next->pid()}-*") ?: []);
            self::assertSame(0, $next->stop(10.0));
            $this->server = null;
            self::assertSame([basename($running)], array_map('basename', glob("$temp/kiln-tasks-*") ?: []), 'a server that stops removes its own');
        } finally {
            $this->server?->stop();
            $this->server = null;
            PeerProcess::removeDir($temp);
        }
    }

    /**
     * Task workers and user processes hold neither the HTTP port nor the admin port: only the supervisor and workers do.
     * The task socket's listening end is the task workers' (and the supervisor's): neither the workers nor a user
     * process holds it (nor passes it to a program it starts).
     */
    public function testTaskWorkersAndUserProcessesHoldNoListeningSocketButTheirOwn(): void
    {
        $server = $this->start(['--workers=1', '--task-workers=1', '--admin-listen=127.0.0.1:0']);
        $line = $server->waitForLog('~admin listener on http://127\.0\.0\.1:\d+~');
        $adminPort = preg_match('~http://127\.0\.0\.1:(\d+)~', $line, $m) === 1 ? (int) $m[1] : self::fail("no admin address in: $line");
        $task = self::number(self::json(HttpClient::get($server->baseUrl() . '/sleep?s=0.01', [], 10.0)['body'])['pid']);
        $ticker = $this->waitForTicker();
        $listening = self::listeningInodes([$server->port(), $adminPort]);
        self::assertCount(2, $listening);
        $taskSocket = self::taskSocketInode($server->pid());
        self::assertContains($taskSocket, self::socketInodes($task), 'the task worker holds the task socket');
        foreach (['task worker' => $task, 'user process' => $ticker] as $what => $pid) {
            self::assertSame([], array_values(array_intersect(self::socketInodes($pid), $listening)), "the $what (pid $pid) holds no listening socket of the server");
        }
        $others = ['user process' => $ticker];
        foreach ($server->workerPids() as $pid) { // every child of the supervisor: the HTTP workers are titled so
            if (str_starts_with((string) @file_get_contents("/proc/$pid/cmdline"), 'kiln: worker')) {
                $others["worker $pid"] = $pid;
            }
        }
        self::assertCount(2, $others, 'the user process and the one HTTP worker');
        foreach ($others as $what => $pid) {
            self::assertNotContains($taskSocket, self::socketInodes($pid), "the $what (pid $pid) holds no task socket");
        }
    }

    /** `--watch` reloads as `kiln reload` does: the task workers and user processes too, not only the HTTP workers. */
    public function testAWatchedEditReplacesTaskWorkersAndUserProcessesToo(): void
    {
        $dir = PeerProcess::tempDir('kiln-tasks-watch');
        try {
            mkdir("$dir/public");
            copy(self::APP, "$dir/app.php");
            copy(\dirname(self::APP) . '/public/script.php', "$dir/public/script.php");
            $server = $this->server = KilnProcess::start("$dir/app.php", ['--workers=1', '--task-workers=1', '--watch'], ['KILN_TEST_EVENTS' => $this->events], 20.0);
            $pid = fn(): int => self::number(self::json(HttpClient::get($server->baseUrl() . '/sleep?s=0.01', [], 10.0)['body'])['pid']);
            $task = $pid();
            $ticker = $this->waitForTicker();

            file_put_contents("$dir/app.php", file_get_contents("$dir/app.php") . "\n// edited\n");
            touch("$dir/app.php", time() + 5);
            $server->waitForLog('/--watch: app\.php changed: reloading the workers/', 10.0);
            $server->waitForLog('/reloaded: generation 2 serving/', 20.0);

            self::assertNotSame($task, $pid(), 'the task worker was replaced');
            self::assertNotSame($ticker, $this->waitForTicker($ticker), 'and the user process started again');
        } finally {
            $this->server?->stop();
            $this->server = null;
            PeerProcess::removeDir($dir);
        }
    }

    public function testACallRunningDuringAReloadIsFinishedBeforeItsTaskWorkerIsReplaced(): void
    {
        $server = $this->start(['--workers=1', '--task-workers=1']);
        $long = $this->send('/long?s=4');
        $pid = $this->waitForRunning();

        $server->signal(SIGHUP);
        $response = $long->receive(30.0);

        self::assertSame(['result' => $pid], self::json($response['body']), 'the call ran to its end');
        $server->waitForLog('/reloaded: generation 2 serving/', 20.0);
        $next = self::number(self::json(HttpClient::get($server->baseUrl() . '/sleep?s=0.01', [], 20.0)['body'])['pid']);
        self::assertNotSame($pid, $next, 'then a fresh task worker took over');
    }

    /**
     * A reload's QUIT does not reach the call: its sleep() runs its whole time (a handled signal would cut it short
     * and sleep() answer the seconds left). The call's error_get_last() is its own: the task worker's accept, which
     * waits 1 s at a time, leaves a timeout error each time nothing came, and the wait lets it do so once.
     */
    public function testAReloadDoesNotCutShortTheSleepOfACallThatSeesNoErrorOfTheTaskWorker(): void
    {
        $server = $this->start(['--workers=1', '--task-workers=1']);
        usleep(1_500_000);
        $sleep = $this->send('/whole-sleep?s=3');
        $this->waitForRunning();

        $server->signal(SIGHUP);
        $result = self::json($sleep->receive(30.0)['body']);

        self::assertSame(0, $result['left'] ?? null, 'sleep() was not interrupted: ' . json_encode($result));
        self::assertGreaterThanOrEqual(2.9, $result['took'] ?? 0, 'the call slept its three seconds');
        self::assertArrayHasKey('lastError', $result);
        self::assertNull($result['lastError'], 'error_get_last() in a call');
        $server->waitForLog('/reloaded: generation 2 serving/', 20.0);
    }

    /**
     * @param list<string> $args
     * @param array<string, string> $env
     */
    private function start(array $args, array $env = []): KilnProcess
    {
        return $this->server = KilnProcess::start(self::APP, $args, ['KILN_TEST_EVENTS' => $this->events, ...$env], 20.0);
    }

    private function send(string $path): PendingRequest
    {
        \assert($this->server !== null);
        return PendingRequest::send($this->server->host(), $this->server->port(), $path);
    }

    /** The pid of the task worker that announced the last call. */
    private function runningPid(): int
    {
        preg_match_all('/^running (\d+)$/m', (string) file_get_contents($this->events), $m);
        return (int) end($m[1]);
    }

    /** Waits until task calls announced themselves $count times in all; returns the pid of the last. */
    private function waitForRunning(int $count = 1): int
    {
        $deadline = microtime(true) + 15.0;
        while (preg_match_all('/^running \d+$/m', (string) file_get_contents($this->events)) < $count) {
            if (microtime(true) > $deadline) {
                self::fail("no task started; log:\n" . $this->server?->log());
            }
            usleep(50_000);
        }
        return $this->runningPid();
    }

    /** Waits until the ticker process writes from a pid other than $not, and returns it. */
    private function waitForTicker(int $not = 0): int
    {
        $deadline = microtime(true) + 20.0;
        while (true) {
            preg_match_all('/^ticker (\d+)$/m', (string) file_get_contents($this->events), $m);
            $pid = (int) end($m[1]);
            if ($pid !== 0 && $pid !== $not) {
                return $pid;
            }
            if (microtime(true) > $deadline) {
                self::fail("no ticker from a new process; log:\n" . $this->server?->log());
            }
            usleep(50_000);
        }
    }

    /** @return list<string> the inodes of the sockets process $pid holds */
    private static function socketInodes(int $pid): array
    {
        $inodes = [];
        foreach (glob("/proc/$pid/fd/*") ?: [] as $fd) {
            if (preg_match('/^socket:\[(\d+)\]$/', (string) @readlink($fd), $s) === 1) {
                $inodes[] = $s[1];
            }
        }
        return $inodes;
    }

    /** The inode of the listening task socket of the server whose supervisor is $supervisor (/proc/net/unix). */
    private static function taskSocketInode(int $supervisor): string
    {
        foreach (file('/proc/net/unix') ?: [] as $row) {
            $f = preg_split('/\s+/', trim($row)) ?: [];
            // Num RefCount Protocol Flags Type St Inode Path; St 01 is listening.
            if (\count($f) > 7 && $f[5] === '01' && preg_match("~/kiln-tasks-$supervisor-[0-9a-f]+/tasks\\.sock$~", $f[7]) === 1) {
                return $f[6];
            }
        }
        self::fail("no listening task socket of supervisor $supervisor in /proc/net/unix");
    }

    /**
     * @param list<int> $ports
     * @return list<string> the inodes of the sockets listening on these ports of 127.0.0.1 (/proc/net/tcp)
     */
    private static function listeningInodes(array $ports): array
    {
        $inodes = [];
        foreach (file('/proc/net/tcp') ?: [] as $row) {
            $f = preg_split('/\s+/', trim($row)) ?: [];
            // local_address is HEX-IP:HEX-PORT; state 0A is LISTEN; the inode is the tenth field.
            if (\count($f) > 9 && ($f[3] ?? '') === '0A' && \in_array(hexdec(substr($f[1], -4)), $ports, true)) {
                $inodes[] = $f[9];
            }
        }
        return $inodes;
    }

    /** @return array<string, mixed> */
    private static function json(string $body): array
    {
        $data = json_decode($body, true);
        self::assertIsArray($data, $body);
        /** @var array<string, mixed> $data */
        return $data;
    }

    /** @return array<mixed> */
    private static function list(mixed $value): array
    {
        self::assertIsArray($value);
        return $value;
    }

    private static function number(mixed $value): int
    {
        self::assertIsInt($value);
        return $value;
    }

    private static function text(mixed $value): string
    {
        self::assertIsString($value);
        return $value;
    }
}
