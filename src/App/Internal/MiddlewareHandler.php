<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\Middleware;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * One link of a middleware chain, built once (per route, or once for the global middleware), so a request
 * walks a chain of existing objects instead of allocating one per middleware.
 *
 * @internal
 */
final class MiddlewareHandler implements RequestHandler
{
    public function __construct(
        public readonly Middleware $middleware,
        public readonly RequestHandler $next,
    ) {}

    public function handle(Request $request): Response
    {
        return $this->middleware->process($request, $this->next);
    }

    /** @param list<Middleware> $middleware outermost first */
    public static function chain(array $middleware, RequestHandler $last): RequestHandler
    {
        $handler = $last;
        for ($i = \count($middleware) - 1; $i >= 0; $i--) {
            $handler = new self($middleware[$i], $handler);
        }
        return $handler;
    }
}
