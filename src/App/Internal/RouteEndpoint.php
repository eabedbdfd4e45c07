<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\App;
use Kiln\App\Handler\HandlerInvoker;
use Kiln\App\Routing\Route;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * The end of a route's chain: calls the route's handler with injection and converts what it returned.
 *
 * @internal
 */
final class RouteEndpoint implements RequestHandler
{
    public function __construct(
        private readonly Route $route,
        private readonly App $app,
        private readonly HandlerInvoker $invoker,
    ) {}

    /** The handler's Context, if it takes one, is made by the invoker: most handlers do not. */
    public function handle(Request $request): Response
    {
        /** @var array<string, string> $params */
        $params = $request->attribute(App::ROUTE_PARAMS, []);
        return $this->invoker->invoke($this->route->handler, $request, $params, null, $this->app);
    }
}
