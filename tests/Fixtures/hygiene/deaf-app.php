<?php

declare(strict_types=1);

// tests/Fixtures/hygiene/app.php with one more user process, which ignores SIGTERM (doc 029 allows a user process
// to handle it): it outlives a supervisor killed with `kill -9` even where FFI sends it SIGTERM then.

$app = require __DIR__ . '/app.php';
\assert($app instanceof Kiln\App\App);

$app->process('deaf', static function (): void {
    pcntl_signal(SIGTERM, SIG_IGN);
    for ($i = 0; $i < 120; $i++) {
        sleep(1);
    }
});

return $app;
