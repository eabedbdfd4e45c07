<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

use Kiln\App\Routing\RouteMatch;

/**
 * The matches of static routes (a plain literal pattern: no parameters but the defaults), by method and
 * path, each made on its route's first request. RouteMatch is readonly and such a match depends on nothing
 * else, so one object serves every request. The Router fills and empties it; the App's dispatcher reads it
 * before asking the Router, so the commonest request is matched by two hash probes and no call.
 *
 * Only methods with a table of their own are cached, so its size is bounded by the static routes whatever
 * methods clients send.
 *
 * @internal
 */
final class StaticMatches
{
    /** @var array<string, array<string, RouteMatch>> method => path => match */
    public array $byMethod = [];
}
