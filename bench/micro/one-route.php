<?php

declare(strict_types=1);

// The App with one route and no middleware: the router, handler invoker and return contract alone, between
// the bare engine (bench/apps/bare.php) and the example app (examples/hello, which adds RequestId).
//
//   php bench/micro/instructions.php bare bench/micro/one-route.php app

use Kiln\App\App;

$app = new App();
$app->get('/hello', fn() => 'Hello, World!');

return $app;
