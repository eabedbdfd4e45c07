<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\Wire\RequestHead;

/**
 * A per-route body size cap, tighter than the server's global limit (which already stopped reading the
 * socket at its own bound). The declared Content-Length decides; for a chunked body, the size received.
 * Over the limit → 413 before the handler runs.
 */
final class BodyLimit implements Middleware
{
    public function __construct(private readonly int $maxBytes)
    {
        if ($maxBytes < 0) {
            throw new \ValueError("BodyLimit maxBytes is a byte count >= 0, got $maxBytes");
        }
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        $head = $request->head();
        $size = $head->bodyKind === RequestHead::BODY_LENGTH ? $head->contentLength : $request->bodySize();
        if ($size > $this->maxBytes) {
            throw HttpErrorException::payloadTooLarge("Request body is larger than {$this->maxBytes} bytes");
        }
        return $next->handle($request);
    }
}
