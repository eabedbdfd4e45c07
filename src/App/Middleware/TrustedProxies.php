<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\Middleware;
use Kiln\Http\ForwardedHeaders;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * Finds the real client behind reverse proxies you trust and puts it on the request as a
 * `Kiln\Http\ForwardedClient` (Request::forwardedClient()): its address (Request::clientIp()), scheme
 * (Request::scheme()), host (lower-case, no port) and the port it reached at the proxy (a script's
 * SERVER_PORT). Only when the TCP peer is one of $proxies; the rules are ForwardedHeaders'.
 */
final class TrustedProxies implements Middleware
{
    public const HEADERS = ForwardedHeaders::HEADERS;

    private readonly ForwardedHeaders $forwarded;

    /**
     * @param list<string> $proxies addresses or CIDRs, IPv4 or IPv6
     * @param list<string> $headers which of HEADERS to honour
     * @throws \ValueError for an entry that is no address or CIDR, or a header not in HEADERS
     */
    public function __construct(array $proxies, array $headers = self::HEADERS)
    {
        $this->forwarded = new ForwardedHeaders($proxies, $headers);
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        $client = $this->forwarded->client($request);
        if ($client !== null) {
            $request->setForwardedClient($client);
        }
        return $next->handle($request);
    }
}
