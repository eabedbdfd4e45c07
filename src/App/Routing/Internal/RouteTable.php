<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

use Kiln\App\Routing\Route;

/**
 * The routes of one method, compiled. Static paths sit in a hash. Dynamic routes hang in a tree keyed by
 * their literal leading segments (`/api/v1/users/{id}` under '/api/v1/users'); each node holds, in
 * registration order, its own routes and its ancestors' (so `/{any}` stays a candidate everywhere), as
 * chunks of grouped regexes. A lookup walks the path's segments down the tree with one hash probe each,
 * then tries the few chunks of the deepest node: its cost follows the path's depth and the routes that
 * share its prefix, not the number of routes.
 *
 * @internal
 */
final readonly class RouteTable
{
    /**
     * @param array<string, Route> $static
     * @param array<string, list<Chunk>> $nodes literal prefix => candidates; '' is the root
     */
    private function __construct(
        private array $static,
        private array $nodes,
    ) {}

    /** @param list<Route> $routes in priority order (the first route that matches wins) */
    public static function build(array $routes): self
    {
        $static = [];
        /** @var array<string, array<int, Route>> $own prefix => routes by priority */
        $own = ['' => []];
        foreach ($routes as $priority => $route) {
            $path = $route->parsed->staticPath;
            if ($path !== null) {
                $static[$path] ??= $route;
                continue;
            }
            $prefix = $route->parsed->prefix;
            $own[$prefix][$priority] = $route;
            for ($at = 0; $prefix !== '' && ($at = strpos($prefix, '/', $at + 1)) !== false;) {
                $own[substr($prefix, 0, $at)] ??= [];
            }
        }
        ksort($own, SORT_STRING);
        /** @var array<string, list<Chunk>> $nodes */
        $nodes = [];
        /** @var array<string, array<int, Route>> $inherited */
        $inherited = [];
        foreach ($own as $prefix => $mine) {
            $prefix = (string) $prefix;
            $parent = $prefix === '' ? null : substr($prefix, 0, (int) strrpos($prefix, '/'));
            $candidates = $parent === null ? $mine : $inherited[$parent] + $mine;
            $inherited[$prefix] = $candidates;
            if ($parent !== null && $mine === []) {
                $nodes[$prefix] = $nodes[$parent];
                continue;
            }
            ksort($candidates);
            $nodes[$prefix] = RegexCompiler::chunks(array_values($candidates));
        }
        return new self($static, $nodes);
    }

    /**
     * @return array{Route, array<string, string>}|null the route and its parameters (decoded, over defaults)
     * @throws \RuntimeException when PCRE fails (a user regex backtracking without end)
     */
    public function lookup(string $path): ?array
    {
        $route = $this->static[$path] ?? null;
        if ($route !== null) {
            return [$route, $route->defaults];
        }
        $chunks = $this->nodes[''];
        $offset = 1;
        $slash = false;
        while ($path !== '' && ($slash = strpos($path, '/', $offset)) !== false) {
            $node = $this->nodes[substr($path, 0, $slash)] ?? null;
            if ($node === null) {
                break;
            }
            $chunks = $node;
            $offset = $slash + 1;
        }
        if ($slash === false && $path !== '') {
            $chunks = $this->nodes[$path] ?? $chunks;
        }
        foreach ($chunks as $chunk) {
            $found = preg_match($chunk->regex, $path, $m, PREG_UNMATCHED_AS_NULL);
            if ($found === 1) {
                $route = $chunk->routes[(int) $m['MARK']];
                $params = $route->defaults;
                foreach ($route->parsed->paramNames as $i => $name) {
                    $value = $m[$i + 1] ?? null;
                    if ($value !== null) {
                        $params[$name] = rawurldecode($value);
                    }
                }
                return [$route, $params];
            }
            if ($found === false) {
                throw new \RuntimeException('Route matching failed: ' . preg_last_error_msg());
            }
        }
        return null;
    }
}
