<?php

declare(strict_types=1);

namespace Kiln\Site\Cgi;

use Kiln\Http\ErrorResponse;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Site\ScriptRunner;

/**
 * Serves a cgi-bin directory at its prefix: resolves the script (CgiBinResolver) and runs it with the
 * runner (a CgiRunner), answering 404 / 403 itself.
 */
final class CgiBin implements RequestHandler
{
    public function __construct(
        private readonly CgiBinResolver $resolver,
        private readonly ScriptRunner $runner,
    ) {}

    public function handle(Request $request): Response
    {
        $script = $this->resolver->resolve($request->path());
        if (\is_int($script)) {
            return ErrorResponse::forRequest($request, $script);
        }

        return $this->runner->run($request, $script);
    }
}
