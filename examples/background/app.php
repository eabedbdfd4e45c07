<?php

declare(strict_types=1);

// Background work beside the requests: worker hooks, timers, task workers and a user process.
//   bin/kiln serve examples/background --task-workers=2
//   curl localhost:8080/primes?below=2000000   (CPU-heavy: runs in a task worker, /stats keeps answering)
//   curl localhost:8080/stats

use Kiln\App\App;

use function Kiln\App\task;

use Kiln\App\WorkerInfo;
use Kiln\Http\Request;

require_once \dirname(__DIR__, 2) . '/src/bootstrap.php';

final class Primes
{
    /** Counts the primes below $below: seconds of CPU for a few million, so not for a worker's event loop. */
    public static function count(int $below): int
    {
        $sieve = array_fill(0, max(2, $below), true);
        $count = 0;
        for ($i = 2; $i < $below; $i++) {
            if ($sieve[$i]) {
                $count++;
                for ($j = $i * $i; $j < $below; $j += $i) {
                    $sieve[$j] = false;
                }
            }
        }
        return $count;
    }
}

$app = new App();
$stats = ['worker' => 0, 'ticks' => 0, 'started' => microtime(true)];

$app->onWorkerStart(function (WorkerInfo $worker) use (&$stats): void {
    $stats['worker'] = $worker->number;
    error_log("worker {$worker->number} (pid {$worker->pid}) is serving");
});
$app->onWorkerStop(fn(WorkerInfo $worker) => error_log("worker {$worker->number} (pid {$worker->pid}) is done"));

// In each worker, and on one worker of the node only.
$app->every(1, function () use (&$stats): void {
    $stats['ticks']++;
});
$app->everyOnNode('report', 30, fn() => error_log('node report from pid ' . getmypid() . ': ' . memory_get_usage(true) . ' bytes'));

$app->task('primes', fn(int $below): int => Primes::count($below));

$app->get('/primes', function (Request $request): array {
    $asked = $request->query()['below'] ?? '1000000';
    $below = min(20_000_000, max(2, \is_string($asked) ? (int) $asked : 0));
    $started = microtime(true);
    $count = task('primes', $below)->await();
    return ['below' => $below, 'primes' => $count, 'seconds' => round(microtime(true) - $started, 3)];
});

$app->get('/stats', function () use (&$stats): array {
    return $stats + ['pid' => getmypid()];
});

// A process beside the workers: started with the server, started again if it ends, stopped with it.
$app->process('heartbeat', function (): void {
    while (true) { // @phpstan-ignore while.alwaysTrue
        error_log('heartbeat from pid ' . getmypid());
        sleep(60);
    }
});

return $app;
