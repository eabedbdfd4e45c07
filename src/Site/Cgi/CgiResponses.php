<?php

declare(strict_types=1);

namespace Kiln\Site\Cgi;

use Kiln\Http\ErrorResponse;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Isolation\Cgi\CgiHead;

use function Kiln\Loop\async;

/** Responses of the CGI-speaking tiers (cgi, fork): a parsed CGI head with a streamed body, or an error. */
final class CgiResponses
{
    /** @param iterable<string> $body */
    public static function fromHead(CgiHead $head, iterable $body): Response
    {
        $response = new Response($head->status, [], $body);
        foreach ($head->forwardedHeaders() as [$name, $value]) {
            $response->addHeader($name, $value);
        }

        return $response;
    }

    /**
     * fromHead(), except that for HEAD the body is read to its end in the background and not sent: the
     * script is left to finish (closing its output early would kill it mid-way).
     *
     * @param \Generator<int, string> $body
     */
    public static function forMethod(string $method, CgiHead $head, \Generator $body): Response
    {
        if ($method !== 'HEAD') {
            return self::fromHead($head, $body);
        }
        async(static function () use ($body): void {
            foreach ($body as $ignored) {
            }
        })->ignore();

        return self::fromHead($head, []);
    }

    /** 502, 503 (with Retry-After) or 504, as Kiln's error page in the form the request accepts. */
    public static function error(Request $request, int $status, int $retryAfter = 1): Response
    {
        if ($status !== 502 && $status !== 503 && $status !== 504) {
            throw new \ValueError("CgiResponses::error() is for 502, 503 and 504, not $status");
        }

        return ErrorResponse::forRequest($request, $status, '', $status === 503 ? ['Retry-After' => (string) $retryAfter] : []);
    }
}
