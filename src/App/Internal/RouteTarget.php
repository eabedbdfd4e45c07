<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\Handler\Internal\PreparedHandler;
use Kiln\Http\RequestHandler;

/**
 * What the dispatcher runs for a route, made on the route's first request: its handler, prepared, and the
 * chain of the route's own middleware ending in that handler (null when it has none: the handler is called
 * directly).
 *
 * @internal
 */
final readonly class RouteTarget
{
    /**
     * @param array<string, string> $params a static route's parameters (its defaults), the same on every
     *        request; unused for a dynamic route, whose parameters come with each match
     */
    public function __construct(
        public PreparedHandler $handler,
        public ?RequestHandler $chain,
        public array $params = [],
    ) {}

    /** @param array<string, string> $params */
    public function withParams(array $params): self
    {
        return new self($this->handler, $this->chain, $params);
    }
}
