<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware;
use Kiln\App\Middleware\Internal\ErrorHeaders;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * Gives every request an id: the caller's (when it sent a well-formed one and $trustIncoming) or a new
 * one. The id is the request attribute `request_id` and is echoed on the response under the same header
 * (also on an HttpErrorException thrown further down; other failures can read the attribute).
 *
 * Generated ids are a random per-worker prefix plus a counter ("3f9c0a7d1e2b4c5a-1f"): unique across
 * workers and restarts, and about ten times cheaper than 16 fresh random bytes per request (getrandom is a
 * syscall). The prefix is drawn on the first request, so it is per worker even if this object was built
 * before a fork. The counter reveals how many requests this worker served; pass $trustIncoming = false
 * and put a proxy in front if that matters.
 */
final class RequestId implements Middleware
{
    public const ATTRIBUTE = 'request_id';

    private string $prefix = '';

    private int $counter = 0;

    /**
     * The header's name lower-cased, as request heads key them; '' when incoming ids are not trusted (no
     * header has an empty name, so the lookup finds nothing).
     */
    private readonly string $incoming;

    public function __construct(
        private readonly string $header = 'X-Request-Id',
        bool $trustIncoming = true,
    ) {
        if (preg_match('/^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$/D', $header) !== 1) {
            throw new \ValueError("RequestId header must be a header field name such as 'X-Request-Id', got '$header'");
        }
        $this->incoming = $trustIncoming ? strtolower($header) : '';
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        $id = $request->head->headers[$this->incoming][0] ?? null;
        if ($id === null || \preg_match('/^[A-Za-z0-9._-]{1,128}$/D', $id) !== 1) {
            $id = $this->prefix === '' ? $this->generate() : $this->prefix . \dechex(++$this->counter);
        }
        $request->setAttribute(self::ATTRIBUTE, $id);
        try {
            $response = $next->handle($request);
        } catch (HttpErrorException $e) {
            throw ErrorHeaders::with($e, [$this->header => $id]);
        }
        $response->setHeader($this->header, $id);
        return $response;
    }

    private function generate(): string
    {
        if ($this->prefix === '') {
            $this->prefix = bin2hex(random_bytes(8)) . '-';
        }
        return $this->prefix . \dechex(++$this->counter);
    }
}
