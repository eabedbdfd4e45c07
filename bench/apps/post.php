<?php

declare(strict_types=1);

// The app bench/reload.sh serves: a POST that answers at once (a request no proxy may send twice).
$app = new Kiln\App\App();
$app->post('/post', static fn(): string => 'posted');
$app->get('/ready', static fn(): string => 'ready');
return $app;
