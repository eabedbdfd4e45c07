<?php

declare(strict_types=1);

// Test app for the process-model tests. Throws at boot while KILN_TEST_FAIL_FLAG names an existing file.
$flag = getenv('KILN_TEST_FAIL_FLAG');
if (is_string($flag) && $flag !== '' && file_exists($flag)) {
    throw new RuntimeException('fixture asked to fail at boot (flag file present)');
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
return $app;
