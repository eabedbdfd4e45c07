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
$app->get('/boom', fn() => throw new RuntimeException('fixture boom'));
$app->get('/slow', function () {
    \Kiln\Loop\delay(3.0);
    return 'slow done';
});
return $app;
