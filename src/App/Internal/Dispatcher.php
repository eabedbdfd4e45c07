<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\App;
use Kiln\App\Handler\HandlerInvoker;
use Kiln\App\HttpError;
use Kiln\App\Routing\Internal\StaticMatches;
use Kiln\App\Routing\MatchStatus;
use Kiln\App\Routing\Route;
use Kiln\App\Routing\Router;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * The innermost handler of the global middleware chain: matches the route and runs the route's own chain
 * (group and route middleware, then the handler). Each route's chain is built once, on its first request;
 * a route without middleware of its own has none: its handler is called directly.
 *
 * @internal
 */
final class Dispatcher implements RequestHandler
{
    /** @var array<int, RequestHandler> by spl_object_id of the Route (routes live as long as the App) */
    private array $chains = [];

    private readonly StaticMatches $static;

    public function __construct(
        private readonly Router $router,
        private readonly App $app,
        private readonly HandlerInvoker $invoker,
        /** Serves what no route matches (an app's document root); null: 404 */
        private readonly ?RequestHandler $fallback = null,
    ) {
        $this->static = $router->static;
    }

    public function handle(Request $request): Response
    {
        $head = $request->head;
        // A static route seen before is found without a call: Router::match() would return the same object.
        $match = $this->static->byMethod[$head->method][$head->path] ?? $this->router->match($head->method, $head->path);
        $route = $match->route; // set exactly when the status is FOUND
        if ($route !== null) {
            $request->setAttribute(App::ROUTE_PARAMS, $match->params);
            if ($route->middleware === []) {
                // Nothing runs between here and the handler: call it with the params just set.
                return $this->invoker->invoke($route->handler, $request, $match->params, null, $this->app);
            }
            $chain = $this->chains[\spl_object_id($route)] ??= MiddlewareHandler::chain(
                $route->middleware,
                new RouteEndpoint($route, $this->app, $this->invoker),
            );
            return $chain->handle($request);
        }
        return match ($match->status) {
            MatchStatus::AUTO_OPTIONS => new Response(204, ['Allow' => $match->allowHeader()]),
            MatchStatus::METHOD_NOT_ALLOWED => throw HttpError::methodNotAllowed($match->allowed),
            default => $this->fallback?->handle($request) ?? throw HttpError::notFound(),
        };
    }
}
