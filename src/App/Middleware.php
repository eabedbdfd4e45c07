<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * PSR-15-shaped middleware. Runs in the order registered: global middleware first, then the group's,
 * then the route's; each decides whether to call $next (or answer itself: short-circuit).
 *
 * Contract: process() MUST return a Response or throw. It MAY suspend (it runs in the request's Fiber).
 * It MUST NOT buffer a streamed body (an iterable or stream Response body) to inspect it: wrap the
 * iterable in a generator instead, so the response stays streamed.
 */
interface Middleware
{
    public function process(Request $request, RequestHandler $next): Response;
}
