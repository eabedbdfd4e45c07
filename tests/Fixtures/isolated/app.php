<?php

declare(strict_types=1);

// Isolated-tier fixture: coroutine routes beside a php-cgi pool serving public/ under /legacy/.
// The pool is configured from KILN_TEST_POOL_* variables so each test picks its own.

use Kiln\App\App;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Isolation\PhpCgi\PhpCgiClient;
use Kiln\Isolation\PhpCgi\PhpCgiOptions;

use function Kiln\Loop\delay;

use Kiln\Site\Isolated\PhpCgiRunner;
use Kiln\Site\Script;
use Kiln\Site\SiteConfig;

$env = static fn(string $name, string $default): string => ($value = getenv($name)) === false || $value === '' ? $default : $value;

$client = PhpCgiClient::create(new PhpCgiOptions(
    binary: $env('KILN_TEST_PHP_CGI', 'php-cgi'),
    size: (int) $env('KILN_TEST_POOL_SIZE', '2'),
    maxRequests: (int) $env('KILN_TEST_POOL_MAX_REQUESTS', '10000'),
    queue: (int) $env('KILN_TEST_POOL_QUEUE', '64'),
    timeLimit: (float) $env('KILN_TEST_TIME_LIMIT', '30'),
    // KILN_TEST_POOL_INI: one more NAME=VALUE.
    phpIni: ['memory_limit' => '77M', 'display_errors' => 'Off', 'log_errors' => 'On', 'output_buffering' => '0']
        + (str_contains($extra = $env('KILN_TEST_POOL_INI', ''), '=') ? [strstr($extra, '=', true) => substr($extra, strpos($extra, '=') + 1)] : []),
    passEnv: ['KILN_TEST_PASSED'],
    jit: true,
    batch: $env('KILN_TEST_POOL_SCHED', 'normal') === 'batch',
));
$runner = getenv('KILN_TEST_FROM_CONFIG') === '1'
    // As `kiln serve --tier=isolated --pool-size=1 --php-ini=memory_limit=33M` configures it.
    ? PhpCgiRunner::fromConfig(SiteConfig::create(tier: 'isolated', poolSize: 1, phpIni: ['memory_limit' => '33M']))
    : new PhpCgiRunner($client);
$root = (string) realpath(__DIR__ . '/public');

$app = new App();

$app->get('/hello', static fn(): string => 'Hello, World!');

$app->get('/wait', static fn(): string => (delay(0.05) ?? 'waited'));

// Holds a request (and so a draining worker) for ?s= seconds.
$app->get('/linger', static fn(Request $request): string => (delay((float) ($request->query()['s'] ?? '1')) ?? 'lingered'));

// The worker's view of its children: {"waiting": n, "starting": n, "idle": n, "busy": n, ...}.
$app->get('/pool', static fn(): array => $client->pool->stats());

$app->any('/legacy/{path:.+}', static function (Request $request, string $path) use ($runner, $root): Response {
    $file = realpath("$root/$path");
    if ($file === false || !str_starts_with($file, "$root/") || !is_file($file)) {
        return Response::text("not found\n", 404);
    }
    return $runner->run($request, new Script($file, "/legacy/$path", '', $root));
});

return $app;
