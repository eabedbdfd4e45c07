<?php

declare(strict_types=1);

namespace Kiln\App\Routing;

use Kiln\App\Middleware;
use Kiln\App\Routing\Internal\NameRegistry;
use Kiln\App\Routing\Internal\ParsedPattern;
use Kiln\App\Routing\Internal\PatternParser;

/**
 * A route: methods, a pattern, a handler (anything the handler invoker understands), and the middleware
 * that runs around it, groups' first (outermost group first), then the route's own.
 *
 * Created by RouteCollector; the pattern is checked at once (\ValueError naming the route). $name,
 * $defaults and $middleware are public to read; change them only through name(), defaults() and
 * middleware().
 */
final class Route
{
    /** The method list of a route registered with any(): it matches every method. */
    public const ANY = '*';

    /** @internal */
    public readonly ParsedPattern $parsed;

    public ?string $name = null;

    /** @var array<string, string> values for parameters the path leaves out (or that it does not have) */
    public array $defaults = [];

    /** @var list<Middleware> */
    public array $middleware;

    /**
     * @internal use RouteCollector
     * @param list<string> $methods upper case, or [Route::ANY]
     * @param list<Middleware> $middleware the enclosing groups', outer first
     */
    public function __construct(
        public readonly array $methods,
        public readonly string $pattern,
        public readonly mixed $handler,
        array $middleware,
        private readonly NameRegistry $names,
    ) {
        $this->middleware = $middleware;
        $this->parsed = PatternParser::parse($pattern, $this->label());
    }

    /** Names the route for Router::url(). Names are unique per collector. */
    public function name(string $name): self
    {
        if ($name === '') {
            throw new \ValueError("Route {$this->label()}: a route name must not be empty");
        }
        if ($this->name !== null) {
            throw new \ValueError("Route {$this->label()} is already named '{$this->name}'");
        }
        $this->names->claim($name, $this);
        $this->name = $name;
        return $this;
    }

    /** Appends middleware, run after the groups' middleware, in the order given. */
    public function middleware(Middleware ...$middleware): self
    {
        array_push($this->middleware, ...array_values($middleware));
        return $this;
    }

    /**
     * Values for parameters absent from the path (optional parts left out), or extra values the handler
     * receives as if they were parameters. Merged over earlier defaults.
     *
     * @param array<string, string|int|float> $defaults
     */
    public function defaults(array $defaults): self
    {
        foreach ($defaults as $key => $value) {
            if (!is_string($value) && !is_int($value) && !is_float($value)) {
                throw new \ValueError("Route {$this->label()}: default '$key' must be a string, int or float");
            }
            $this->defaults[(string) $key] = (string) $value;
        }
        return $this;
    }

    public function isAny(): bool
    {
        return $this->methods === [self::ANY];
    }

    /** "GET|POST /users/{id}", for messages. */
    public function label(): string
    {
        return ($this->isAny() ? 'ANY' : implode('|', $this->methods)) . ' ' . $this->pattern;
    }
}
