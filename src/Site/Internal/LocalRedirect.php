<?php

declare(strict_types=1);

namespace Kiln\Site\Internal;

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\Wire\RequestHead;

/**
 * A CGI local redirect (RFC 3875 §6.2.2: `Location: /path` and no Status) served again inside the server,
 * as a GET of the new path and query with the original headers less the body's, from the same client on
 * the same connection; at most MAX deep, so scripts redirecting to each other end in a 502.
 *
 * @internal shared by the CGI runner and the FastCGI upstream
 */
final class LocalRedirect
{
    public const MAX = 10;

    private const DEPTH = 'kiln.local_redirects';

    private function __construct() {}

    /** The redirect's response, or null when it cannot be followed (not a plain local path, or too deep). */
    public static function follow(Request $request, string $location, RequestHandler $handler): ?Response
    {
        $previous = $request->attribute(self::DEPTH, 0);
        $depth = (\is_int($previous) ? $previous : 0) + 1;
        if ($depth > self::MAX || \preg_match('~^/[\x21-\x7E]*$~', $location) !== 1 || \str_contains($location, '#')) {
            return null;
        }
        $next = self::request($request, $location);
        $next->setAttribute(self::DEPTH, $depth);
        return $handler->handle($next);
    }

    public static function request(Request $request, string $location): Request
    {
        $old = $request->head();
        $headers = $old->headers;
        unset($headers['content-length'], $headers['content-type'], $headers['transfer-encoding']);
        $q = \strpos($location, '?');
        $head = new RequestHead(
            'GET',
            $location,
            $old->version,
            $headers,
            $q === false ? $location : \substr($location, 0, $q),
            $q === false ? '' : \substr($location, $q + 1),
            $old->host,
            RequestHead::BODY_NONE,
            0,
            $old->keepAlive,
            false,
        );
        return new Request($head, '', null, $request->remoteAddress, $request->remotePort, $request->localAddress, $request->localPort);
    }
}
