<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

use Kiln\App\Routing\Route;

/**
 * Builds the path of a named route. Values are rawurlencoded and must fit the parameter's regex (as the
 * router would see them). An optional part is written when one of its parameters, or a parameter of a part
 * nested in it, is given; its other parameters then come from the values or the route's defaults.
 *
 * @internal
 */
final class UrlGenerator
{
    /**
     * @param array<string, string|int|float|\Stringable|null> $params null = not given
     * @param array<array-key, mixed> $query appended with http_build_query (RFC 3986 encoding)
     */
    public static function generate(Route $route, array $params, array $query): string
    {
        $parts = $route->parsed->parts;
        $given = [];
        foreach ($params as $name => $value) {
            if (!in_array($name, $route->parsed->paramNames, true)) {
                throw new \ValueError("Route {$route->label()} has no parameter '$name'");
            }
            if ($value !== null) {
                if (!is_scalar($value) && !$value instanceof \Stringable || is_bool($value)) {
                    throw new \ValueError("Route {$route->label()}: parameter '$name' must be a string, int, float or Stringable");
                }
                $given[$name] = (string) $value;
            }
        }
        $depth = 0;
        foreach ($parts as $level => $part) {
            foreach ($part as $piece) {
                if ($piece instanceof Param && isset($given[$piece->name])) {
                    $depth = $level;
                }
            }
        }
        $url = '';
        for ($level = 0; $level <= $depth; $level++) {
            foreach ($parts[$level] ?? [] as $piece) {
                $url .= is_string($piece) ? $piece : self::value($route, $piece, $given);
            }
        }
        if ($query !== []) {
            $encoded = http_build_query($query, '', '&', PHP_QUERY_RFC3986);
            $url .= $encoded === '' ? '' : '?' . $encoded;
        }
        return $url;
    }

    /** @param array<string, string> $given */
    private static function value(Route $route, Param $param, array $given): string
    {
        $value = $given[$param->name] ?? $route->defaults[$param->name] ?? null;
        if ($value === null) {
            throw new \ValueError("Route {$route->label()} needs parameter '{$param->name}'");
        }
        $encoded = rawurlencode($value);
        if (!$param->accepts($encoded)) {
            throw new \ValueError("Route {$route->label()}: '$value' does not fit parameter '{$param->name}' ({$param->regex})");
        }
        return $encoded;
    }
}
