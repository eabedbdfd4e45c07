<?php

declare(strict_types=1);

// App routes keep sessions in Redis (kiln serve --redis); the isolated tier's php-cgi keeps them there through
// php-redis's session handler (--php-ini=session.save_handler=redis): tests/Integration/Scale/RedisSessionsTest.php.

use Kiln\App\App;
use Kiln\App\Session;

$app = new App();
$app->sessions();
$app->get('/route/visits', function (Session $session): array {
    $visits = (int) $session->get('visits', 0) + 1;
    $session->set('visits', $visits);
    return ['visits' => $visits, 'classic' => $session->get('classic'), 'id' => $session->id()];
});
$app->site(__DIR__ . '/public', [], 'isolated');

return $app;
