<?php

declare(strict_types=1);

use Kiln\App\App;

use function Kiln\Loop\delay;

$app = new App();

$app->get('/hello', fn() => 'Hello, World!');

$app->get('/sleep', function (): string {
    delay(1.0);
    return 'ok';
});

$app->get('/pid', fn() => (string) getmypid());

// Since PHP 8 an undefined function throws \Error: an ordinary 500, the worker lives on.
$app->get('/undefined', function (): string {
    $missing = 'kiln_test_undefined_function';
    return $missing();
});

// A real fatal error (E_COMPILE_ERROR, which no handler can catch): ends the worker process.
$app->get('/fatal', function (): string {
    eval('function kiln_test_declared_twice(): void {}');
    eval('function kiln_test_declared_twice(): void {}');
    return 'unreachable';
});

$app->get('/oom', function (): string {
    ini_set('memory_limit', '64M');
    $hog = [];
    while (true) {
        $hog[] = str_repeat('x', 1 << 20);
    }
});

$app->get('/exit', function (): never {
    exit(3);
});


// No ini_set here: the limit is the one the server gave its workers (--memory-limit).
$app->get('/grow', function (): string {
    $hog = [];
    while (true) {
        $hog[] = str_repeat('x', 1 << 20);
    }
});

$app->get('/memory-limit', fn() => (string) ini_get('memory_limit'));

return $app;
