<?php

declare(strict_types=1);

/**
 * Router micro-benchmark: µs per Router::match() for the first, middle and last registered route and a
 * miss (404, which also works out the Allow list), on an API-shaped route set of 100 / 1,000 / 10,000
 * routes (a tenth static), and on a worst case where no route has a literal prefix to sort by.
 * For scale, a naive router (one preg_match per route, in order) on the same 1,000 API routes.
 * Best of 5 rounds per case. Usage: php bench/micro/router.php [seconds per round, default 0.2]
 */

use Kiln\App\Routing\Internal\RegexCompiler;
use Kiln\App\Routing\MatchStatus;
use Kiln\App\Routing\Route;
use Kiln\App\Routing\RouteCollector;
use Kiln\App\Routing\Router;

require __DIR__ . '/../lib/autoload.php';

$seconds = (float) ($argv[1] ?? 0.2);

/** 10 routes per resource under /api/v1: 3 static, 7 dynamic (one with an optional part). */
function api(int $resources): RouteCollector
{
    $routes = new RouteCollector();
    for ($i = 0; $i < $resources; $i++) {
        $base = "/api/v1/res$i";
        $routes->get($base, 'list');
        $routes->post($base, 'create');
        $routes->get("$base/search", 'search');
        $routes->get("$base/{id:\\d+}", 'show');
        $routes->put("$base/{id:\\d+}", 'replace');
        $routes->patch("$base/{id:\\d+}", 'update');
        $routes->delete("$base/{id:\\d+}", 'delete');
        $routes->get("$base/{id:\\d+}/comments[/{page:\\d+}]", 'comments');
        $routes->post("$base/{id:\\d+}/comments", 'comment');
        $routes->delete("$base/{id:\\d+}/comments/{cid:\\d+}", 'uncomment');
    }
    return $routes;
}

/** Every route starts with a parameter: nothing to sort by, only the chunked regexes help. */
function flat(int $count): RouteCollector
{
    $routes = new RouteCollector();
    for ($i = 0; $i < $count; $i++) {
        $routes->get("/{tenant}/item$i/{id}", 'item');
    }
    return $routes;
}

function measure(Router $router, string $method, string $path, float $seconds): float
{
    $best = INF;
    for ($round = 0; $round < 5; $round++) {
        $done = 0;
        $start = hrtime(true);
        $deadline = $start + (int) ($seconds * 1e9);
        do {
            for ($i = 0; $i < 1000; $i++) {
                $router->match($method, $path);
            }
            $done += 1000;
            $now = hrtime(true);
        } while ($now < $deadline);
        $best = min($best, ($now - $start) / 1e3 / $done);
    }
    return $best;
}

/** @param array<string, array{string, string, MatchStatus}> $cases */
function report(string $label, RouteCollector $routes, array $cases, float $seconds): void
{
    $router = new Router($routes);
    $start = hrtime(true);
    $router->match('GET', '/');
    $build = (hrtime(true) - $start) / 1e6;
    printf("%-26s %6d routes, compiled in %6.1f ms\n", $label, count($routes->routes()), $build);
    foreach ($cases as $name => [$method, $path, $status]) {
        $match = $router->match($method, $path);
        if ($match->status !== $status) {
            throw new LogicException("$label $name: $method $path gave {$match->status->name}");
        }
        printf("    %-12s %-6s %-40s %6.2f µs\n", $name, $method, $path, measure($router, $method, $path, $seconds));
    }
}

printf("PHP %s, opcache.jit=%s, pcre.jit=%s\n", PHP_VERSION, ini_get('opcache.jit') ?: 'off', ini_get('pcre.jit'));
foreach ([10, 100, 1000] as $resources) {
    $last = $resources - 1;
    $middle = intdiv($resources, 2);
    report("API, $resources resources", api($resources), [
        'first' => ['GET', '/api/v1/res0/123', MatchStatus::FOUND],
        'middle' => ['GET', "/api/v1/res$middle/123/comments/2", MatchStatus::FOUND],
        'last' => ['DELETE', "/api/v1/res$last/123/comments/9", MatchStatus::FOUND],
        'static' => ['GET', "/api/v1/res$last/search", MatchStatus::FOUND],
        'miss' => ['GET', '/api/v1/nothing/here', MatchStatus::NOT_FOUND],
        'wrong method' => ['POST', "/api/v1/res$last/123", MatchStatus::METHOD_NOT_ALLOWED],
    ], $seconds);
}
foreach ([100, 1000] as $count) {
    $last = $count - 1;
    report('worst case: no prefix', flat($count), [
        'first' => ['GET', '/acme/item0/1', MatchStatus::FOUND],
        'middle' => ['GET', '/acme/item' . intdiv($count, 2) . '/1', MatchStatus::FOUND],
        'last' => ['GET', "/acme/item$last/1", MatchStatus::FOUND],
        'miss' => ['GET', '/acme/nothing/1', MatchStatus::NOT_FOUND],
    ], $seconds);
}

$naive = array_map(
    static fn(Route $r): array => [$r->methods, '~^' . RegexCompiler::routeRegex($r->parsed) . '$~'],
    api(100)->routes(),
);
$scan = static function (string $method, string $path) use ($naive): bool {
    foreach ($naive as [$methods, $regex]) {
        if (in_array($method, $methods, true) && preg_match($regex, $path) === 1) {
            return true;
        }
    }
    return false;
};
foreach (['first' => ['GET', '/api/v1/res0/123'], 'last' => ['DELETE', '/api/v1/res99/123/comments/9']] as $name => [$method, $path]) {
    $best = INF;
    for ($round = 0; $round < 5; $round++) {
        $start = hrtime(true);
        for ($i = 0; $i < 2000; $i++) {
            $scan($method, $path);
        }
        $best = min($best, (hrtime(true) - $start) / 1e3 / 2000);
    }
    printf("naive scan, 1000 routes   %-12s %-6s %-33s %6.2f µs\n", $name, $method, $path, $best);
}
