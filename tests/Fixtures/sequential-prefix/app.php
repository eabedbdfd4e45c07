<?php

declare(strict_types=1);

use Kiln\App\App;

require_once dirname(__DIR__, 3) . '/src/bootstrap.php';

// Only /seq/ goes to the sequential tier: the fork tier (which needs neither php-cgi nor FFI) runs the rest.
$app = new App();
$app->get('/hello', static fn(): array => ['route' => 'hello']);
$app->site(__DIR__ . '/public', ['/seq/' => 'sequential'], 'fork');

return $app;
