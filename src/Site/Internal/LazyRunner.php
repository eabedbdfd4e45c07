<?php

declare(strict_types=1);

namespace Kiln\Site\Internal;

use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;

/**
 * A runner built on its first script: a worker that never serves /cgi-bin/ never builds the CGI runner,
 * and a runner that cannot be built fails that request (500, logged) rather than the worker's start.
 *
 * @internal
 */
final class LazyRunner implements ScriptRunner
{
    private ?ScriptRunner $runner = null;

    /** @param \Closure(): ScriptRunner $build */
    public function __construct(private readonly \Closure $build) {}

    public function run(Request $request, Script $script): Response
    {
        return ($this->runner ??= ($this->build)())->run($request, $script);
    }
}
