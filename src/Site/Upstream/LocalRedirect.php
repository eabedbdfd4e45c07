<?php

declare(strict_types=1);

namespace Kiln\Site\Upstream;

use Kiln\Http\Request;
use Kiln\Http\Wire\RequestHead;

/**
 * The request a CGI local redirect (RFC 3875 §6.2.2) is re-dispatched as: a GET of the new path and query,
 * with the original headers less the body's, from the same client on the same connection.
 *
 * @internal
 */
final class LocalRedirect
{
    private function __construct() {}

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
