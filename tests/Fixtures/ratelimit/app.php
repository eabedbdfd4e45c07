<?php

declare(strict_types=1);

// Rate-limit fixture: /limited allows 10 requests per 60 s per client across all workers of the node;
// every answer names the worker's pid and the store class. The handler wraps the middleware itself and
// renders the HttpErrorException, so it does not depend on how the App pipeline wires middleware and errors.

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware\RateLimit;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Store\NodeState;

$limit = new RateLimit(rate: 10, per: 60.0);
$handler = new class implements RequestHandler {
    public function handle(Request $request): Response
    {
        return Response::text('allowed pid=' . getmypid() . ' store=' . NodeState::get()::class);
    }
};

$app = new \Kiln\App\App();
$app->get('/limited', function (Request $r) use ($limit, $handler): Response {
    try {
        return $limit->process($r, $handler);
    } catch (HttpErrorException $e) {
        $response = Response::text('limited pid=' . getmypid() . ' store=' . NodeState::get()::class, $e->status);
        foreach ($e->headers as $name => $value) {
            $response->setHeader($name, $value);
        }
        return $response;
    }
});
return $app;
