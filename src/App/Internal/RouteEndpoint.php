<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\App;
use Kiln\App\Handler\Internal\PreparedHandler;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * The end of a route's middleware chain: calls the route's handler with injection and converts what it
 * returned. (A route without middleware of its own has no chain: the dispatcher calls the handler itself.)
 *
 * @internal
 */
final class RouteEndpoint implements RequestHandler
{
    public function __construct(
        private readonly PreparedHandler $handler,
        private readonly App $app,
    ) {}

    /** The handler's Context, if it takes one, is made by the invoker: most handlers do not. */
    public function handle(Request $request): Response
    {
        /** @var array<string, string> $params */
        $params = $request->attribute(App::ROUTE_PARAMS, []);
        return $this->handler->call($request, $params, null, $this->app);
    }
}
