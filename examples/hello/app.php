<?php

declare(strict_types=1);

use Kiln\App\App;
use Kiln\App\Middleware\BasicAuth;
use Kiln\App\Middleware\RequestId;
use Kiln\App\Routing\RouteCollector;
use Kiln\Http\Request;

use function Kiln\Loop\all;
use function Kiln\Loop\async;
use function Kiln\Loop\delay;

$app = new App();

// Global middleware: every request gets an X-Request-Id.
$app->middleware(new RequestId());

$app->get('/', fn() => '<h1>Kiln</h1><ul>'
    . '<li><a href="/hello">/hello</a></li><li><a href="/json">/json</a></li>'
    . '<li><a href="/users/42">/users/42</a></li><li><a href="/slow">/slow</a> (two waits in parallel)</li>'
    . '<li><a href="/api/users/list">/api/users/list</a></li><li><a href="/admin/stats">/admin/stats</a> (admin / kiln)</li></ul>');

$app->get('/hello', fn() => 'Hello, World!');

$app->get('/json', fn() => ['message' => 'Hello, World!']);

$app->get('/users/{id:\d+}', fn(int $id) => ['id' => $id, 'name' => "User $id"])->name('user');

// An async route: two 100 ms waits run side by side (about 100 ms in all), and the worker serves
// other requests meanwhile.
$app->get('/slow', function (): array {
    $started = microtime(true);
    [$a, $b] = all([
        async(function (): string {
            delay(0.1);
            return 'first';
        }),
        async(function (): string {
            delay(0.1);
            return 'second';
        }),
    ]);
    return ['results' => [$a, $b], 'ms' => (int) round((microtime(true) - $started) * 1000)];
});

// A streamed response: each line is sent as it is produced.
$app->get('/count', function (): Generator {
    for ($i = 1; $i <= 5; $i++) {
        yield "$i\n";
        delay(0.2);
    }
});

$app->post('/echo', fn(Request $request) => ['bytes' => $request->bodySize()]);

// A group with its own middleware: /admin/* needs a login (admin / kiln).
$app->group('/admin', function (RouteCollector $admin) use ($app): void {
    $admin->get('/stats', fn(Request $request) => [
        'user' => $request->attribute(BasicAuth::ATTRIBUTE),
        'pid' => getmypid(),
        'memory' => memory_get_usage(),
        'user_url' => $app->url('user', ['id' => 7]),
    ]);
}, [new BasicAuth(['admin' => '$2y$10$gvoGDHUowrWcD2YxZpx3iOxJ8ypFJMl6mEsGfvr5aUIhhmY2kZa3K'], 'Kiln example')]);

// One file per endpoint: api/users/list.php answers /api/users/list.
$app->api(__DIR__ . '/api');

return $app;
