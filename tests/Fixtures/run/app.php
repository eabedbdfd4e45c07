<?php

declare(strict_types=1);

require __DIR__ . '/../../../src/bootstrap.php';

$app = new Kiln\App\App();
$app->get('/hello', fn() => 'Hello from run()');
$app->run();
