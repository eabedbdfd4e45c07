<?php

declare(strict_types=1);

// Timers and worker hooks: every event is a line in the file named by KILN_TEST_EVENTS ("start 1 4711").

use Kiln\App\App;
use Kiln\App\WorkerInfo;

$events = (string) getenv('KILN_TEST_EVENTS');
$note = static function (string $line) use ($events): void {
    file_put_contents($events, $line . "\n", FILE_APPEND | LOCK_EX);
};

$app = new App();

$app->get('/pid', fn() => (string) getmypid());

$app->onWorkerStart(fn(WorkerInfo $worker) => $note("start {$worker->number} {$worker->pid}"));
$app->onWorkerStart(function (): void {
    throw new \RuntimeException('start hook boom');
});
$app->onWorkerStop(fn(WorkerInfo $worker) => $note("stop {$worker->number} {$worker->pid}"));

$app->everyOnNode('tick', 0.2, fn() => $note('tick ' . getmypid()));
// Once for the node, whichever worker, however many replacements follow.
$app->afterOnNode('once', 0.3, fn() => $note('once ' . getmypid()));
$app->after(0.3, function (): void {
    throw new \RuntimeException('timer boom');
});

// A timer cancelled before it fires never runs.
$app->after(0.2, fn() => $note('cancelled timer ran ' . getmypid()))->cancel();

return $app;
