<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

use Kiln\App\Routing\Route;

/**
 * Route names of one RouteCollector, unique.
 *
 * @internal
 */
final class NameRegistry
{
    /** @var array<string, Route> */
    private array $routes = [];

    public function claim(string $name, Route $route): void
    {
        $holder = $this->routes[$name] ?? null;
        if ($holder !== null) {
            throw new \ValueError("Route name '$name' is already used by {$holder->label()}; pick another name for {$route->label()}");
        }
        $this->routes[$name] = $route;
    }

    public function get(string $name): ?Route
    {
        return $this->routes[$name] ?? null;
    }
}
