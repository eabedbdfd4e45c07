<?php

declare(strict_types=1);

// The bare engine: a RequestHandler with no router, middleware or return-contract conversion.
// bench/run compares the full App stack (examples/hello) against this.

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

return new class implements RequestHandler {
    public function handle(Request $request): Response
    {
        return match ($request->path()) {
            '/hello' => new Response(200, ['Content-Type' => 'text/html; charset=utf-8'], 'Hello, World!'),
            '/json' => Response::json(['message' => 'Hello, World!']),
            default => new Response(404, [], ''),
        };
    }
};
