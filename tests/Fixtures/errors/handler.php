<?php

declare(strict_types=1);

// The bare engine (no App, no error pages): a handler that throws is answered by the HTTP core itself.

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

use function Kiln\Loop\delay;

return new class implements RequestHandler {
    public function handle(Request $request): Response
    {
        switch ($request->path()) {
            case '/throw':
                throw new RuntimeException('thrown on purpose');
            case '/sleep':
                delay((float) ($request->query()['s'] ?? 1));
                return Response::text("slept\n");
            case '/bad-header':
                $response = Response::text("never sent\n");
                $response->setBody(fopen('php://memory', 'r'));
                $body = $response->body();
                fclose($body); // a body that is no longer a stream: the sender refuses it with a 500
                return $response;
            case '/fatal':
                eval('function kiln_errors_declared_twice(): void {}');
                eval('function kiln_errors_declared_twice(): void {}');
                return Response::text("unreachable\n");
            default:
                return Response::text("hello\n");
        }
    }
};
