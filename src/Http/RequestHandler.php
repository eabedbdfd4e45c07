<?php

declare(strict_types=1);

namespace Kiln\Http;

/**
 * Turns a request into a response. Called inside a Fiber: an implementation MAY suspend (wait for I/O,
 * timers, other requests) and the worker serves other connections meanwhile. An exception escaping
 * handle() becomes a 500 for that request only.
 */
interface RequestHandler
{
    public function handle(Request $request): Response;
}
