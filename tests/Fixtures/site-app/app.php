<?php

declare(strict_types=1);

use Kiln\App\App;

require_once dirname(__DIR__, 3) . '/src/bootstrap.php';

$app = new App();
$app->get('/hello', static fn(): array => ['route' => 'hello']);
$app->site(__DIR__ . '/public', ['/iso/' => 'isolated'], 'sequential');

return $app;
