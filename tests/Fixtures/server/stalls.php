<?php

declare(strict_types=1);

// Test app with handlers that stop the worker's event loop (a CPU loop, a blocking sleep) and one that is
// slow but yields (its fiber waits on a timer: the loop keeps turning).
$app = new \Kiln\App\App();
$app->get('/pid', fn() => (string) getmypid());
$app->get('/spin', static function (): string {
    for ($n = 0; true; $n++) {
        $n %= 1000; // spins until the worker is ended
    }
});
$app->get('/sleep', static function (): string {
    for (;;) {
        sleep(3600); // a signal cuts a sleep short: this one sleeps again, as code retrying a blocking wait does
    }
});
$app->get('/nap', static function (): string {
    sleep(3600); // cut short by the stall report's signal: the request then answers
    return 'woke';
});
$app->get('/busy', static function (\Kiln\Http\Request $request): string {
    // Holds the loop for ?ms= milliseconds of CPU: short, but many of them may run in one loop turn.
    $ms = $request->query()['ms'] ?? '100';
    $until = hrtime(true) + (\is_numeric($ms) ? (int) $ms : 0) * 1_000_000;
    for ($n = 0; hrtime(true) < $until; $n++) {
        $n %= 1000;
    }
    return (string) getmypid();
});
$app->get('/wait', static function (): string {
    \Kiln\Loop\delay((float) (getenv('KILN_TEST_WAIT') ?: 3));
    return 'waited';
});
return $app;
