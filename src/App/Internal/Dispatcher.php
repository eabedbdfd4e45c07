<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\App;
use Kiln\App\Handler\HandlerInvoker;
use Kiln\App\HttpErrorException;
use Kiln\App\Routing\MatchStatus;
use Kiln\App\Routing\Route;
use Kiln\App\Routing\RouteMatch;
use Kiln\App\Routing\Router;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * The innermost handler of the global middleware chain: matches the route and runs the route's own chain
 * (group and route middleware, then the handler). Each route's target (its handler prepared, its chain) is
 * made once, on its first request, with the middleware the route has then; a route without middleware of
 * its own has no chain: its handler is called directly.
 *
 * A static route's target is also kept by method and path, with the route's parameters, so a request for
 * it is dispatched by two hash probes. It is kept only where the Router keeps the match
 * (Internal\StaticMatches), which bounds it the same way. The App makes a new Dispatcher when routes are
 * added.
 *
 * @internal
 */
final class Dispatcher implements RequestHandler
{
    /** @var array<string, array<string, RouteTarget>> method => path => target, for static routes */
    private array $static = [];

    /** @var array<int, RouteTarget> by spl_object_id of the Route (routes live as long as the App) */
    private array $targets = [];

    public function __construct(
        private readonly Router $router,
        private readonly App $app,
        private readonly HandlerInvoker $invoker,
        /** Serves what no route matches (an app's document root); null: 404 */
        private readonly ?RequestHandler $fallback = null,
    ) {}

    public function handle(Request $request): Response
    {
        $head = $request->head;
        $target = $this->static[$head->method][$head->path] ?? null;
        if ($target !== null) {
            $request->setAttribute(App::ROUTE_PARAMS, $target->params);
            // The route's chain, or with no route middleware the handler itself, given the params just set.
            return $target->chain?->handle($request)
                ?? $target->handler->call($request, $target->params, null, $this->app);
        }
        $match = $this->router->match($head->method, $head->path);
        $route = $match->route; // set exactly when the status is FOUND
        if ($route === null) {
            return $this->unmatched($match, $request);
        }
        $target = $this->targets[\spl_object_id($route)] ??= $this->target($route);
        $kept = $route->parsed->staticPath !== null
            && ($this->router->static->byMethod[$head->method][$head->path] ?? null) === $match;
        if ($kept) {
            // The Router keeps this match: keep the target with its params, for the next request.
            $target = $this->static[$head->method][$head->path] = $target->withParams($match->params);
        }
        $request->setAttribute(App::ROUTE_PARAMS, $match->params);
        return $target->chain?->handle($request)
            ?? $target->handler->call($request, $match->params, null, $this->app);
    }

    private function target(Route $route): RouteTarget
    {
        $handler = $this->invoker->prepare($route->handler);
        $chain = $route->middleware === []
            ? null
            : MiddlewareHandler::chain($route->middleware, new RouteEndpoint($handler, $this->app));
        return new RouteTarget($handler, $chain);
    }

    private function unmatched(RouteMatch $match, Request $request): Response
    {
        return match ($match->status) {
            MatchStatus::AUTO_OPTIONS => new Response(204, ['Allow' => $match->allowHeader()]),
            MatchStatus::METHOD_NOT_ALLOWED => throw HttpErrorException::methodNotAllowed($match->allowed),
            default => $this->fallback?->handle($request) ?? throw HttpErrorException::notFound(),
        };
    }
}
