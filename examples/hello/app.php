<?php

declare(strict_types=1);

use Kiln\App\App;

$app = new App();

$app->get('/', fn() => '<h1>Kiln</h1><p>Try <a href="/hello">/hello</a> and <a href="/json">/json</a>.</p>');
$app->get('/hello', fn() => 'Hello, World!');
$app->get('/json', fn() => ['message' => 'Hello, World!', 'server' => 'kiln']);

return $app;
