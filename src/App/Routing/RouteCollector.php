<?php

declare(strict_types=1);

namespace Kiln\App\Routing;

use Kiln\App\Middleware;
use Kiln\App\Routing\Internal\NameRegistry;

/**
 * Where routes are registered, in order (the order decides between dynamic routes that match the same
 * path). Patterns: see Router. A handler is anything the handler invoker accepts (closure, invokable,
 * [Class::class, 'method'], 'Class::method'); it is not inspected here.
 *
 * Methods are case-sensitive (RFC 9110) and are upper-cased at registration; registering the same method
 * and pattern twice is a \ValueError.
 */
final class RouteCollector
{
    /** @var list<Route> */
    private array $routes = [];

    /** @var array<string, Route> "METHOD pattern" => route, to refuse duplicates */
    private array $registered = [];

    private string $prefix = '';

    /** @var list<Middleware> */
    private array $middleware = [];

    private readonly NameRegistry $names;

    /** @var list<\Closure(): void> called after each route is added (routers drop what they compiled) */
    private array $watchers = [];

    public function __construct()
    {
        $this->names = new NameRegistry();
    }

    public function get(string $path, mixed $handler): Route
    {
        return $this->route(['GET'], $path, $handler);
    }

    public function post(string $path, mixed $handler): Route
    {
        return $this->route(['POST'], $path, $handler);
    }

    public function put(string $path, mixed $handler): Route
    {
        return $this->route(['PUT'], $path, $handler);
    }

    public function patch(string $path, mixed $handler): Route
    {
        return $this->route(['PATCH'], $path, $handler);
    }

    public function delete(string $path, mixed $handler): Route
    {
        return $this->route(['DELETE'], $path, $handler);
    }

    public function options(string $path, mixed $handler): Route
    {
        return $this->route(['OPTIONS'], $path, $handler);
    }

    /** A route for every method, including ones no other route uses. */
    public function any(string $path, mixed $handler): Route
    {
        return $this->route([Route::ANY], $path, $handler);
    }

    /**
     * @param list<string> $methods e.g. ['GET', 'POST']; ['*'] means any method
     * @param string $path starts with '/'; inside a group it may be '' (the group's prefix itself)
     */
    public function route(array $methods, string $path, mixed $handler): Route
    {
        if ($path !== '' && $path[0] !== '/') {
            throw new \ValueError("A route path must start with '/', got '$path'");
        }
        if ($path === '' && $this->prefix === '') {
            throw new \ValueError("A route path must start with '/', got ''");
        }
        $route = new Route(self::methods($methods, $path), $this->prefix . $path, $handler, $this->middleware, $this->names);
        foreach ($route->methods as $method) {
            $key = $method . ' ' . $route->pattern;
            $other = $this->registered[$key] ?? null;
            if ($other !== null) {
                throw new \ValueError("Route {$route->label()} is registered twice (first as {$other->label()})");
            }
            $this->registered[$key] = $route;
        }
        $this->routes[] = $route;
        foreach ($this->watchers as $changed) {
            $changed();
        }
        return $route;
    }

    /**
     * Registers the routes $define adds under $prefix, wrapped in $middleware. Nested groups concatenate
     * prefixes and middleware, outer first. A trailing '/' on the prefix is dropped.
     *
     * @param \Closure(RouteCollector): void $define
     * @param list<Middleware> $middleware
     */
    public function group(string $prefix, \Closure $define, array $middleware = []): void
    {
        if ($prefix !== '' && $prefix[0] !== '/') {
            throw new \ValueError("A group prefix must start with '/', got '$prefix'");
        }
        foreach ($middleware as $item) {
            if (!$item instanceof Middleware) {
                throw new \ValueError("Group $prefix: middleware must implement " . Middleware::class . ', got ' . get_debug_type($item));
            }
        }
        [$outerPrefix, $outerMiddleware] = [$this->prefix, $this->middleware];
        $this->prefix .= rtrim($prefix, '/');
        array_push($this->middleware, ...$middleware);
        try {
            $define($this);
        } finally {
            [$this->prefix, $this->middleware] = [$outerPrefix, $outerMiddleware];
        }
    }

    /**
     * Calls $changed after each route added from now on.
     *
     * @internal for Router and App, so matching and dispatch need no check per request that they saw every
     *           route
     * @param \Closure(): void $changed
     */
    public function watch(\Closure $changed): void
    {
        $this->watchers[] = $changed;
    }

    /** @return list<Route> in registration order */
    public function routes(): array
    {
        return $this->routes;
    }

    public function named(string $name): ?Route
    {
        return $this->names->get($name);
    }

    /**
     * @param list<string> $methods
     * @return list<string>
     */
    private static function methods(array $methods, string $path): array
    {
        if ($methods === []) {
            throw new \ValueError("Route $path: give at least one method");
        }
        $normalized = [];
        foreach ($methods as $method) {
            if ($method === Route::ANY) {
                if (count($methods) > 1) {
                    throw new \ValueError("Route $path: '*' (any method) cannot be combined with other methods");
                }
                return [Route::ANY];
            }
            if (preg_match("~^[!#$%&'*+\\-.^_`|\\~0-9A-Za-z]+$~", $method) !== 1) {
                throw new \ValueError("Route $path: '$method' is not an HTTP method");
            }
            $normalized[strtoupper($method)] = true;
        }
        return array_keys($normalized);
    }
}
