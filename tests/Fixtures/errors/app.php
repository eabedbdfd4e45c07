<?php

declare(strict_types=1);

use Kiln\App\App;

// A document root with a tier per prefix, for the error responses of each: public/ through the sequential
// tier, /iso/ through php-cgi, /fork/ through the fork server (the CGI and FastCGI tiers come from flags).
$app = new App();
$app->site(__DIR__ . '/public', ['/iso/' => 'isolated', '/fork/' => 'fork'], 'sequential');

return $app;
