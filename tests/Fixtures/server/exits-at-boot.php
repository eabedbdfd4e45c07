<?php

declare(strict_types=1);

// Test app whose boot calls exit(3) — no exception, no boot-failed message — while KILN_TEST_EXIT_FLAG
// names an existing file: a worker that dies in a crash loop the supervisor only sees as an exit code.
$flag = getenv('KILN_TEST_EXIT_FLAG');
if (is_string($flag) && $flag !== '' && file_exists($flag)) {
    exit(3);
}

$app = new \Kiln\App\App();
$app->get('/', fn() => 'hello from ' . getmypid());
$app->get('/pid', fn() => (string) getmypid());
return $app;
