<?php

declare(strict_types=1);

namespace Kiln\Http;

/**
 * The client as trusted reverse proxies describe it (ForwardedHeaders), carried on the Request
 * (Request::forwardedClient()): what a peer's own connection cannot tell.
 */
final class ForwardedClient
{
    /**
     * @param string $address the client's IP address, normalised (inet_ntop)
     * @param ?string $scheme "http" or "https" when the proxy said which, else null
     * @param ?string $host the host the client asked the proxy for, lower-cased, without port; null if not said
     * @param ?int $port the port the client reached at the proxy: the forwarded host's, else 443 or 80 by
     *             scheme once the proxy said anything of scheme or host; null when it said neither
     */
    public function __construct(
        public readonly string $address,
        public readonly ?string $scheme = null,
        public readonly ?string $host = null,
        public readonly ?int $port = null,
    ) {
        if ($scheme !== null && $scheme !== 'http' && $scheme !== 'https') {
            throw new \ValueError("a forwarded scheme is http or https, not '$scheme'");
        }
        if ($port !== null && ($port < 1 || $port > 65535)) {
            throw new \ValueError("a forwarded port is 1-65535, not $port");
        }
    }
}
