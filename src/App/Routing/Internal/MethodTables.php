<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

use Kiln\App\Routing\Route;

/**
 * All routes compiled into one RouteTable per method. Each table holds, in registration order, the routes
 * of that method and the any() routes. The HEAD table holds the HEAD routes first, then the GET and any()
 * routes (a HEAD request is served by its GET route when no HEAD route matches). Table '*' (any() routes
 * only) serves methods no route names.
 *
 * @internal
 */
final readonly class MethodTables
{
    /**
     * @param array<string, RouteTable> $tables
     * @param list<string> $methods the methods routes name explicitly
     */
    private function __construct(
        private array $tables,
        public array $methods,
    ) {}

    /** @param list<Route> $routes */
    public static function build(array $routes): self
    {
        $methods = [];
        foreach ($routes as $route) {
            foreach ($route->methods as $method) {
                $methods[$method] = true;
            }
        }
        unset($methods[Route::ANY]);
        $methods = array_map('strval', array_keys($methods));
        $tables = [];
        foreach ($methods as $method) {
            $tables[$method] = RouteTable::build(self::of($routes, $method));
        }
        if (in_array('GET', $methods, true)) {
            $head = self::of($routes, 'HEAD');
            $seen = array_flip(array_map('spl_object_id', $head));
            $tables['HEAD'] = RouteTable::build(array_merge($head, array_values(array_filter(
                self::of($routes, 'GET'),
                static fn(Route $r): bool => !isset($seen[spl_object_id($r)]),
            ))));
        }
        $tables[Route::ANY] = RouteTable::build(self::of($routes, Route::ANY));
        return new self($tables, $methods);
    }

    /** Whether $method has a table of its own (else for() gives the any() routes' table). */
    public function has(string $method): bool
    {
        return isset($this->tables[$method]);
    }

    public function for(string $method): RouteTable
    {
        return $this->tables[$method] ?? $this->tables[Route::ANY];
    }

    /**
     * @param list<Route> $routes
     * @return list<Route>
     */
    private static function of(array $routes, string $method): array
    {
        return array_values(array_filter(
            $routes,
            static fn(Route $r): bool => $r->isAny() || in_array($method, $r->methods, true),
        ));
    }
}
