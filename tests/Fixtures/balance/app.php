<?php

declare(strict_types=1);

// Answers with the pid of the worker that holds the connection (AcceptBalanceTest).

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

return new class implements RequestHandler {
    public function handle(Request $request): Response
    {
        return new Response(200, ['Content-Type' => 'text/plain'], (string) getmypid());
    }
};
