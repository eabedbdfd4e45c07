<?php

declare(strict_types=1);

// Task workers and user processes. KILN_TEST_EVENTS names a file the tasks and the user process append lines to.

use Kiln\App\App;

use function Kiln\App\task;
use function Kiln\App\taskWithin;

use Kiln\Http\Request;

use function Kiln\Loop\all;
use function Kiln\Loop\async;

use Kiln\Server\Task\TaskClient;
use Kiln\Server\Task\TaskException;

final class TaskJobs
{
    public static function pid(): int
    {
        return getmypid() ?: 0;
    }

    /** Blocks its process (a task worker is there for that). */
    public static function sleep(float $seconds): int
    {
        usleep((int) ($seconds * 1e6));
        return getmypid() ?: 0;
    }

    public function announceAndSleep(float $seconds): int
    {
        file_put_contents((string) getenv('KILN_TEST_EVENTS'), 'running ' . getmypid() . "\n", FILE_APPEND | LOCK_EX);
        return self::sleep($seconds);
    }

    /**
     * What sleep() answered (the seconds left when a signal cut it short) and how long it took, with the last PHP
     * error the call saw as it began (none: the task worker's own are not the call's).
     *
     * @return array{left: int, took: float, lastError: ?string}
     */
    public function announceAndSleepWhole(int $seconds): array
    {
        $lastError = error_get_last()['message'] ?? null;
        $start = microtime(true);
        file_put_contents((string) getenv('KILN_TEST_EVENTS'), 'running ' . getmypid() . "\n", FILE_APPEND | LOCK_EX);
        $left = sleep($seconds);
        return ['left' => $left, 'took' => microtime(true) - $start, 'lastError' => $lastError];
    }

    /** Says $mark on its standard error three ways (PHP's warning, error_log(), a write to STDERR); returns its pid. */
    public static function complain(string $mark): int
    {
        trigger_error("a task warning $mark", E_USER_WARNING);
        error_log("a task error_log $mark");
        fwrite(STDERR, "a task wrote to STDERR $mark\n");
        return (int) getmypid();
    }

    public static function fail(): never
    {
        throw new \DomainException('the task said no');
    }
}

// KILN_TEST_SLOW_LOAD names a file: while it exists, loading the app takes 3 s (an app that reaches a slow database at load).
if (($slow = getenv('KILN_TEST_SLOW_LOAD')) !== false && $slow !== '' && is_file($slow)) {
    usleep(3_000_000);
}

// KILN_TEST_INSPECTION_LEAVES=1: the child that tells the supervisor the user processes leaves a program running that
// holds its answer's socket (an app starting a helper at load).
if (getenv('KILN_TEST_INSPECTION_LEAVES') === '1' && cli_get_process_title() === 'kiln: app inspection') {
    exec('sleep 25 >/dev/null 2>&1 &');
}

$app = new App();

$app->get('/hello', fn() => 'Hello, World!');

$app->task('add', fn(int $a, int $b): int => $a + $b);
$app->task('db-sleep', function (string $dsn, string $user, string $password, int $seconds): string {
    $pdo = new \PDO($dsn, $user, $password, [\PDO::ATTR_ERRMODE => \PDO::ERRMODE_EXCEPTION]);
    return (string) $pdo->query("SELECT SLEEP($seconds), 'slept'")?->fetchColumn(1);
});

$describe = static fn(\Throwable $e): array => ['error' => $e::class, 'message' => $e->getMessage()];

$app->get('/add', fn() => ['sum' => task('add', 2, 40)->await()]);
$app->get('/complain', fn(Request $r) => ['pid' => task([TaskJobs::class, 'complain'], (string) ($r->query()['mark'] ?? ''))->await()]);
$app->get('/sleep', fn(Request $r) => ['pid' => task([TaskJobs::class, 'sleep'], (float) ($r->query()['s'] ?? '1'))->await()]);

// n tasks of s seconds at once; the elapsed time is measured by the client.
$app->get('/batch', function (Request $r): array {
    $futures = [];
    for ($i = 0; $i < (int) ($r->query()['n'] ?? '20'); $i++) {
        $futures[] = task([TaskJobs::class, 'sleep'], (float) ($r->query()['s'] ?? '1'));
    }
    return ['pids' => array_values(array_unique(all($futures)))];
});

// Like /batch, but each outcome is reported: a pid, or the failure's class.
$app->get('/burst', function (Request $r) use ($describe): array {
    $outcomes = [];
    $futures = [];
    for ($i = 0; $i < (int) ($r->query()['n'] ?? '6'); $i++) {
        try {
            $futures[$i] = task([TaskJobs::class, 'sleep'], (float) ($r->query()['s'] ?? '1'));
        } catch (TaskException $e) {
            $outcomes[$i] = $describe($e)['error'];
        }
    }
    foreach ($futures as $i => $future) {
        try {
            $outcomes[$i] = $future->await();
        } catch (TaskException $e) {
            $outcomes[$i] = $describe($e)['error'];
        }
    }
    ksort($outcomes);
    return ['outcomes' => $outcomes];
});

$app->get('/closure', function () use ($describe): array {
    try {
        return ['result' => task('add', fn() => 1, 2)->await()];
    } catch (\ValueError $e) {
        return $describe($e);
    }
});

$app->get('/timeout', function () use ($describe): array {
    try {
        return ['result' => taskWithin(1.0, [TaskJobs::class, 'announceAndSleep'], 30)->await()];
    } catch (TaskException $e) {
        return $describe($e);
    }
});

$app->get('/long', function (Request $r) use ($describe): array {
    try {
        return ['result' => task([TaskJobs::class, 'announceAndSleep'], (float) ($r->query()['s'] ?? '30'))->await()];
    } catch (TaskException $e) {
        return $describe($e);
    }
});

$app->get('/whole-sleep', fn(Request $r) => task([TaskJobs::class, 'announceAndSleepWhole'], (int) ($r->query()['s'] ?? '3'))->await());

$app->get('/fail', function () use ($describe): array {
    try {
        return ['result' => task([TaskJobs::class, 'fail'])->await()];
    } catch (TaskException $e) {
        return $describe($e);
    }
});

$app->get('/db', fn(Request $r) => ['result' => task(
    'db-sleep',
    (string) getenv('KILN_TEST_DSN'),
    (string) getenv('KILN_TEST_DB_USER'),
    (string) getenv('KILN_TEST_DB_PASSWORD'),
    (int) ($r->query()['s'] ?? '3'),
)->await()]);

// This worker's task calls not answered yet (queued or running).
// Fills the queue (n calls of s seconds, refusals caught), then makes one call more in the same turn and lets its
// failure escape: the queue is full at that instant whatever the task worker has taken, so the request gets a 503.
$overfilled = []; // the calls /overfill made, kept until they end
$app->get('/overfill', function (Request $r) use (&$overfilled): array {
    for ($i = 0; $i < (int) ($r->query()['n'] ?? '6'); $i++) {
        try {
            $overfilled[] = task([TaskJobs::class, 'sleep'], (float) ($r->query()['s'] ?? '1'));
        } catch (TaskException) {
        }
    }
    return ['pid' => task([TaskJobs::class, 'sleep'], 0.01)->await()];
});

$app->get('/inflight', fn() => ['inflight' => TaskClient::current()->inFlight()]);

$app->get('/async-pids', fn() => ['pids' => all([async(fn() => task([TaskJobs::class, 'pid'])->await())])]);

$app->process('ticker', function (): void {
    $events = (string) getenv('KILN_TEST_EVENTS');
    fwrite(STDERR, 'ticker ' . getmypid() . " started\n");
    while (true) { // @phpstan-ignore while.alwaysTrue (a user process runs until the supervisor stops it)
        file_put_contents($events, 'ticker ' . getmypid() . "\n", FILE_APPEND | LOCK_EX);
        usleep(200_000);
    }
});

$app->site(__DIR__ . '/public', tier: 'sequential');

return $app;
