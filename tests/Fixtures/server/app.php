<?php

declare(strict_types=1);

// Test app for the process-model tests. Throws at boot while KILN_TEST_FAIL_FLAG names an existing file.
$flag = getenv('KILN_TEST_FAIL_FLAG');
if (is_string($flag) && $flag !== '' && file_exists($flag)) {
    throw new RuntimeException('fixture asked to fail at boot (flag file present)');
}
// Boots slowly while KILN_TEST_SLOW_BOOT_FLAG names an existing file, touching FLAG.booting first.
$slow = getenv('KILN_TEST_SLOW_BOOT_FLAG');
if (is_string($slow) && $slow !== '' && file_exists($slow)) {
    touch("$slow.booting");
    usleep(1_000_000);
}

$app = new \Kiln\App\App();
$app->get('/', fn() => 'hello from ' . getmypid());
$app->get('/pid', fn() => (string) getmypid());
$app->get('/slow', function () {
    $started = getenv('KILN_TEST_SLOW_FLAG');
    if (is_string($started) && $started !== '') {
        touch($started); // Lets a test see that the request is in flight.
    }
    \Kiln\Loop\delay(2.0);
    return 'slow done';
});
$app->get('/version', fn() => (string) (getenv('KILN_TEST_VERSION') ?: 'v1'));
$app->get('/boom', function (\Kiln\Http\Request $request) {
    throw new RuntimeException('fixture boom ' . $request->target()); // The worker logs it and answers 500.
});
$app->get('/grow', function () {
    static $hog = []; // A leak: 4 MiB more per call, never released.
    $hog[] = str_repeat('x', 4 << 20);
    return (string) getmypid();
});
return $app;
