<?php

declare(strict_types=1);

use Kiln\App\App;

use function Kiln\Loop\delay;

require_once dirname(__DIR__, 3) . '/src/bootstrap.php';

// Coroutine routes beside a sequential site: /slow waits in its Fiber, then leaves a mark in KILN_TEST_MARK.
$app = new App();
$app->get('/large', static fn(): string => str_repeat('L', 24 << 20));
$app->get('/slow', static function (): string {
    delay(1.0);
    file_put_contents((string) getenv('KILN_TEST_MARK'), 'ran');
    return 'slow done';
});
$app->site(__DIR__ . '/public', [], 'sequential');

return $app;
