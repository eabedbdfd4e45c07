<?php

declare(strict_types=1);

namespace Kiln\App\Routing;

/** What Router::match() found for a method and a path. */
enum MatchStatus
{
    /** A route answers: RouteMatch::$route and $params are set. */
    case FOUND;
    /** No route matches the path, whatever the method: answer 404. */
    case NOT_FOUND;
    /** The path matches only other methods: answer 405 with Allow (RouteMatch::$allowed). */
    case METHOD_NOT_ALLOWED;
    /** OPTIONS on a path that has routes but no OPTIONS route: answer 204 with Allow (RouteMatch::$allowed). */
    case AUTO_OPTIONS;
}
