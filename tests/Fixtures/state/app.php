<?php

declare(strict_types=1);

// An App route and a classic script (sequential tier) sharing one session: tests/Integration/State/SharedSessionTest.php.

use Kiln\App\App;
use Kiln\App\Session;

$app = new App();
$app->sessions();
$app->get('/route/visits', function (Session $session): array {
    $visits = (int) $session->get('visits', 0) + 1;
    $session->set('visits', $visits);
    return ['visits' => $visits, 'classic' => $session->get('classic'), 'id' => $session->id()];
});
$app->site(__DIR__ . '/public', [], 'sequential');

return $app;
