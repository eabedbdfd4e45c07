<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\App;
use Kiln\App\Handler\HandlerInvoker;
use Kiln\App\HttpError;
use Kiln\App\Routing\MatchStatus;
use Kiln\App\Routing\Route;
use Kiln\App\Routing\Router;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * The innermost handler of the global middleware chain: matches the route and runs the route's own chain
 * (group and route middleware, then the handler). Each route's chain is built once, on its first request.
 *
 * @internal
 */
final class Dispatcher implements RequestHandler
{
    /** @var array<int, RequestHandler> by spl_object_id of the Route (routes live as long as the App) */
    private array $chains = [];

    public function __construct(
        private readonly Router $router,
        private readonly App $app,
        private readonly HandlerInvoker $invoker,
    ) {}

    public function handle(Request $request): Response
    {
        $match = $this->router->match($request->method(), $request->path());
        if ($match->status === MatchStatus::FOUND) {
            $route = $match->route;
            \assert($route !== null);
            $request->setAttribute(App::ROUTE_PARAMS, $match->params);
            $chain = $this->chains[spl_object_id($route)] ??= MiddlewareHandler::chain(
                $route->middleware,
                new RouteEndpoint($route, $this->app, $this->invoker),
            );
            return $chain->handle($request);
        }
        return match ($match->status) {
            MatchStatus::AUTO_OPTIONS => new Response(204, ['Allow' => $match->allowHeader()]),
            MatchStatus::METHOD_NOT_ALLOWED => throw HttpError::methodNotAllowed($match->allowed),
            default => throw HttpError::notFound(),
        };
    }
}
