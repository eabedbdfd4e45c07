<?php

declare(strict_types=1);

// Test app for the metrics tests: known statuses, an app counter, and a slow route to hold a drain open.
$app = new \Kiln\App\App();
$app->middleware(new \Kiln\App\Middleware\RequestId());
$orders = $app->metrics()->counter('shop_orders_total', 'Orders placed, by kind', ['kind']);
$app->get('/hello', fn() => 'hello');
$app->post('/order/{kind}', function (string $kind) use ($orders) {
    $orders->inc(1, $kind);
    return 'ordered';
});
$app->get('/many', function () use ($app) {
    // Enough series that the worker's export (about 600 KB) is more than its channel takes at once.
    $wide = $app->metrics()->counter('shop_wide_total', 'Many series', ['item']);
    for ($i = 0; $i < 6000; $i++) {
        $wide->inc(1, sprintf('item-%05d-%s', $i, str_repeat('x', 60)));
    }
    return 'many';
});
$app->get('/boom', fn() => throw new RuntimeException('fixture boom'));
$app->get('/slow', function () {
    \Kiln\Loop\delay(3.0);
    return 'slow done';
});
return $app;
