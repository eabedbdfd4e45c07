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
// Sets one key after a pause, so that concurrent requests of one session overlap.
$app->post('/route/keys/{key:[a-z0-9]{1,16}}', function (Session $session, string $key): array {
    $session->get('visits');
    Kiln\Loop\delay(0.05);
    $session->set("key_$key", true);
    return ['set' => $key];
});
$app->get('/route/keys', fn(Session $session): array => array_keys($session->all()));
$app->site(__DIR__ . '/public', [], 'sequential');

return $app;
