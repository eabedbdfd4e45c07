<?php

declare(strict_types=1);

namespace Kiln\Site;

use Kiln\Http\Request;
use Kiln\Http\Response;

/**
 * Runs a resolved script for a request: one implementation per execution tier (sequential in-process,
 * isolated php-cgi pool, fork, CGI, FastCGI upstream). Called inside the request's Fiber; an
 * implementation that waits for a backend MUST suspend rather than block, so the worker keeps serving
 * routes and static files meanwhile. A backend failure is answered as a response (502, 503 with
 * Retry-After, 504), never thrown; an exception is reserved for misuse.
 */
interface ScriptRunner
{
    public function run(Request $request, Script $script): Response;
}
