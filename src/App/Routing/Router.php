<?php

declare(strict_types=1);

namespace Kiln\App\Routing;

use Kiln\App\Routing\Internal\MethodTables;
use Kiln\App\Routing\Internal\RouteTable;
use Kiln\App\Routing\Internal\StaticMatches;
use Kiln\App\Routing\Internal\UrlGenerator;

/**
 * Matches a method and a path to a route of a RouteCollector.
 *
 * Patterns: literal text, `{name}` (one path segment, `[^/]+`), `{name:regex}`, optional parts at the end
 * in brackets, nestable: `/blog[/{page:\d+}[/{sort}]]`. The path is matched as it is on the wire
 * (percent-encoded; a parameter's regex sees `%20`, not a space); parameters come back rawurldecoded.
 *
 * Precedence: a static route (plain literal pattern) beats a dynamic one; among dynamic routes, the one
 * registered first wins. any() routes take part in every method's order. HEAD: a HEAD route if one matches,
 * else the GET route (RouteMatch::$headFallback). OPTIONS with no OPTIONS route: AUTO_OPTIONS.
 *
 * Compiled on the first match, and again if routes were added since. Not safe to register routes from
 * one Fiber while another matches (nothing in Kiln does: routes are registered at boot).
 */
final class Router
{
    /** Order of methods in an Allow list; others follow alphabetically. */
    private const ORDER = ['GET' => 0, 'HEAD' => 1, 'POST' => 2, 'PUT' => 3, 'PATCH' => 4, 'DELETE' => 5, 'OPTIONS' => 6];

    /** Null until the first match, and again after a route is added (compiled on the next match). */
    private ?MethodTables $tables = null;

    /** @internal read by the App's dispatcher, which keeps its own targets for the matches kept here */
    public readonly StaticMatches $static;

    /**
     * Dynamic matches without parameters (an optional part left out), by 2 × spl_object_id of the Route + 1
     * for a HEAD fallback: reusable for the same reason. Routes are never removed, so an id is never reused
     * for another Route.
     *
     * @var array<int, RouteMatch>
     */
    private array $plainMatches = [];

    public function __construct(
        private readonly RouteCollector $routes,
    ) {
        $this->static = new StaticMatches();
        $routes->watch(function (): void {
            $this->tables = null;
            $this->static->byMethod = [];
            $this->plainMatches = [];
        });
    }

    /** @param string $method as on the wire (case-sensitive) */
    public function match(string $method, string $path): RouteMatch
    {
        $match = $this->static->byMethod[$method][$path] ?? null;
        if ($match !== null) {
            return $match;
        }
        $tables = $this->tables ??= MethodTables::build($this->routes->routes());
        $table = $tables->for($method);
        $hit = $table->lookup($path);
        if ($hit !== null) {
            [$route, $params] = $hit;
            $fallback = $method === 'HEAD' && !$route->isAny() && !\in_array('HEAD', $route->methods, true);
            if ($route->parsed->staticPath !== null) {
                // Static routes are only found by their path: cache the match (bounded, see StaticMatches).
                $match = RouteMatch::found($route, $params, $fallback);
                if ($tables->has($method)) {
                    $this->static->byMethod[$method][$path] = $match;
                }
                return $match;
            }
            if ($params === []) {
                return $this->plainMatches[\spl_object_id($route) * 2 + (int) $fallback] ??= RouteMatch::found($route, [], $fallback);
            }
            return RouteMatch::found($route, $params, $fallback);
        }
        $allowed = $this->allowed($tables, $path, $table);
        if ($allowed === []) {
            return RouteMatch::notFound();
        }
        return $method === 'OPTIONS' ? RouteMatch::autoOptions($allowed) : RouteMatch::methodNotAllowed($allowed);
    }

    /**
     * The methods some route accepts for $path: HEAD is added when GET is there, OPTIONS whenever the list
     * is not empty; an any() route contributes GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS.
     *
     * @return list<string> in a stable order (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, then others)
     */
    public function allowedMethods(string $path): array
    {
        return $this->allowed($this->tables(), $path, null);
    }

    /**
     * @param ?RouteTable $failed a table already known not to match $path
     * @return list<string>
     */
    private function allowed(MethodTables $tables, string $path, ?RouteTable $failed): array
    {
        $allowed = [];
        foreach ([...$tables->methods, Route::ANY] as $method) {
            $table = $tables->for($method);
            $hit = $table === $failed ? null : $table->lookup($path);
            if ($hit === null) {
                continue;
            }
            if ($hit[0]->isAny()) {
                $allowed += array_fill_keys(array_keys(self::ORDER), true);
            } else {
                $allowed[$method] = true;
            }
        }
        if ($allowed === []) {
            return [];
        }
        if (isset($allowed['GET'])) {
            $allowed['HEAD'] = true;
        }
        $allowed['OPTIONS'] = true;
        $methods = array_map('strval', array_keys($allowed));
        usort($methods, static fn(string $a, string $b): int => [self::ORDER[$a] ?? 99, $a] <=> [self::ORDER[$b] ?? 99, $b]);
        return $methods;
    }

    /**
     * The path (and query) of a named route.
     *
     * @param array<string, string|int|float|\Stringable|null> $params rawurlencoded; null = left out
     * @param array<array-key, mixed> $query
     * @throws \ValueError for an unknown name, a missing or unknown parameter, or a value its regex refuses
     */
    public function url(string $name, array $params = [], array $query = []): string
    {
        $route = $this->routes->named($name);
        if ($route === null) {
            throw new \ValueError("No route is named '$name'");
        }
        return UrlGenerator::generate($route, $params, $query);
    }

    private function tables(): MethodTables
    {
        return $this->tables ??= MethodTables::build($this->routes->routes());
    }
}
