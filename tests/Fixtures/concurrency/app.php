<?php

declare(strict_types=1);

// Concurrency fixture: handlers that suspend (timers, child processes, async fan-out) on one worker.

use Kiln\App\App;

use function Kiln\Loop\all;
use function Kiln\Loop\async;
use function Kiln\Loop\delay;

use Kiln\Loop\Process;

$app = new App();

$app->get('/hello', fn() => 'Hello, World!');

$app->get('/delay', fn() => (delay(1.0) ?? 'ok'));

$app->get('/throw', function (): string {
    throw new \RuntimeException('boom');
});

// Three half-second waits side by side: ~0.5 s in all, not 1.5 s.
$app->get('/fanout', function (): array {
    $started = hrtime(true);
    $values = all([
        'a' => async(fn() => (delay(0.5) ?? 'a')),
        'b' => async(fn() => (delay(0.5) ?? 'b')),
        'c' => async(fn() => (delay(0.5) ?? 'c')),
    ]);
    return ['values' => $values, 'elapsed' => (hrtime(true) - $started) / 1e9];
});

$app->get('/process', function (): array {
    $result = Process::run(['sh', '-c', 'sleep 0.5; echo hi']);
    return ['exit' => $result->exitCode, 'stdout' => $result->stdout];
});

// Fire and forget a job that fails: nobody awaits it, so the worker must log it and carry on.
$app->get('/orphan', function (): string {
    async(function (): never {
        delay(0.05);
        throw new RuntimeException('background boom');
    });
    return (string) getmypid();
});

$app->get('/pid', fn() => (string) getmypid());

return $app;
