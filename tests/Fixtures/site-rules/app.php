<?php

declare(strict_types=1);

// .htaccess rules written in app.php instead of in files.
use Kiln\App\App;

$app = new App();
$app->get('/route', fn() => 'a route');
$app->site(__DIR__ . '/public', [], 'sequential', rules: [
    '/' => "RewriteEngine On\nRewriteRule ^old$ /new.php [R=301,L]\nRewriteRule ^pretty/(\\w+)$ /new.php?name=$1 [L,QSA]\n",
    '/private/' => "Require all denied\n",
]);
return $app;
