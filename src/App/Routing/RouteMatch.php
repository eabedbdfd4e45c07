<?php

declare(strict_types=1);

namespace Kiln\App\Routing;

/**
 * The answer of Router::match(). On FOUND, $route is set and $params holds the captured parameters
 * (rawurldecoded) over the route's defaults. On METHOD_NOT_ALLOWED and AUTO_OPTIONS, $allowed lists the
 * methods the path accepts, in a stable order, ready for an Allow header.
 *
 * $headFallback is true when a HEAD request is served by a GET route (there is no HEAD route for the path):
 * the caller runs the GET handler and sends its headers without the body.
 */
final readonly class RouteMatch
{
    /**
     * @param array<string, string> $params
     * @param list<string> $allowed
     */
    private function __construct(
        public MatchStatus $status,
        public ?Route $route = null,
        public array $params = [],
        public array $allowed = [],
        public bool $headFallback = false,
    ) {}

    /** @param array<string, string> $params */
    public static function found(Route $route, array $params, bool $headFallback = false): self
    {
        return new self(MatchStatus::FOUND, $route, $params, [], $headFallback);
    }

    public static function notFound(): self
    {
        return new self(MatchStatus::NOT_FOUND);
    }

    /** @param list<string> $allowed */
    public static function methodNotAllowed(array $allowed): self
    {
        return new self(MatchStatus::METHOD_NOT_ALLOWED, allowed: $allowed);
    }

    /** @param list<string> $allowed */
    public static function autoOptions(array $allowed): self
    {
        return new self(MatchStatus::AUTO_OPTIONS, allowed: $allowed);
    }

    /** The value of an Allow header: "GET, HEAD, OPTIONS". */
    public function allowHeader(): string
    {
        return implode(', ', $this->allowed);
    }
}
