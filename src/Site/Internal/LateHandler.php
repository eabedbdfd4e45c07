<?php

declare(strict_types=1);

namespace Kiln\Site\Internal;

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * A handler known only after the runners that need it are built: a document root hands it to its
 * runners for CGI local redirects (RFC 3875 §6.2.2), then binds it to itself.
 *
 * @internal
 */
final class LateHandler implements RequestHandler
{
    private ?RequestHandler $target = null;

    public function bind(RequestHandler $target): void
    {
        $this->target = $target;
    }

    public function handle(Request $request): Response
    {
        return ($this->target ?? throw new \Error('LateHandler used before bind()'))->handle($request);
    }
}
