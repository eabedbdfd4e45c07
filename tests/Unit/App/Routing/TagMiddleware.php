<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Routing;

use Kiln\App\Middleware;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/** A middleware that only carries a tag, to check ordering. */
final class TagMiddleware implements Middleware
{
    public function __construct(public readonly string $tag) {}

    public function process(Request $request, RequestHandler $next): Response
    {
        return $next->handle($request);
    }
}
