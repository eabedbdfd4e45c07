<?php

declare(strict_types=1);

use Kiln\App\App;
use Kiln\Http\Request;

use function Kiln\Loop\delay;

use Kiln\Store\NodeBus;

require_once dirname(__DIR__, 3) . '/src/bootstrap.php';

// What this worker's subscriber heard on 'news', in order.
$received = [];
NodeBus::get()->subscribe('news', static function (string $channel, string $payload) use (&$received): void {
    $received[] = $payload;
});

$app = new App();
$app->post('/publish/{channel}', static function (Request $request, string $channel): array {
    NodeBus::get()->publish($channel, $request->body());
    return ['pid' => getmypid()];
});
// Publishes m1 .. m{n} to {channel} in one go and answers at once: what the bus has not sent yet is still queued.
$app->post('/burst/{channel}/{n}', static function (string $channel, string $n): array {
    for ($i = 1; $i <= (int) $n; $i++) {
        NodeBus::get()->publish($channel, "m$i");
    }
    return ['pid' => getmypid()];
});
$app->get('/received', static function () use (&$received): array {
    return ['pid' => getmypid(), 'spans' => NodeBus::spansNode(), 'messages' => $received];
});
// Publishes 'holding', then keeps its worker busy (draining, after a reload) until its subscriber heard ?until (at most 15 s), then
// publishes ?say and reports what it heard.
$app->get('/hold', static function (Request $request) use (&$received): array {
    $query = $request->query();
    $until = $query['until'] ?? '';
    $say = $query['say'] ?? '';
    NodeBus::get()->publish('news', 'holding');
    $deadline = microtime(true) + 15;
    while (!\in_array($until, $received, true) && microtime(true) < $deadline) {
        delay(0.01);
    }
    NodeBus::get()->publish('news', \is_string($say) ? $say : '');
    return ['pid' => getmypid(), 'messages' => $received];
});
$app->site(__DIR__ . '/public', ['/iso/' => 'isolated', '/fork/' => 'fork'], 'sequential');

return $app;
