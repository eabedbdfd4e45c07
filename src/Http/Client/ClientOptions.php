<?php

declare(strict_types=1);

namespace Kiln\Http\Client;

/** Settings of an HttpClient; every limit has a safe default. */
final class ClientOptions
{
    /**
     * @param array<string, string> $headers default headers, sent unless the request sets the same name
     */
    public function __construct(
        /** Seconds to establish TCP (and TLS) before giving up with TimeoutException. */
        public readonly float $connectTimeout = 10.0,
        /** Seconds for a whole request, from connect to the last body byte, unless the request sets its own. */
        public readonly float $timeout = 30.0,
        /** Seconds an idle keep-alive connection stays in the pool. */
        public readonly float $idleTimeout = 15.0,
        /** Most open connections per scheme+host+port; further requests wait for one to be released. */
        public readonly int $maxConnectionsPerHost = 6,
        /** Largest response head (status line + headers), and largest trailer section. */
        public readonly int $maxHeaderBytes = 65536,
        /** Largest body ClientResponse::body() buffers; stream() is not limited. */
        public readonly int $maxBodyBytes = 16 * 1024 * 1024,
        /** Redirects to follow (301/302/303/307/308); 0 returns the 3xx response as is. */
        public readonly int $maxRedirects = 0,
        public readonly array $headers = ['User-Agent' => 'kiln'],
        /** Verify the server certificate and its name (https). Turn off only for tests. */
        public readonly bool $verifyPeer = true,
        /** CA bundle file for verification; null uses OpenSSL's default store. */
        public readonly ?string $cafile = null,
        /** CA directory (hashed names) for verification. */
        public readonly ?string $capath = null,
    ) {
        foreach (['connectTimeout' => $connectTimeout, 'timeout' => $timeout, 'idleTimeout' => $idleTimeout] as $name => $seconds) {
            if (!($seconds > 0)) {
                throw new \ValueError("ClientOptions::\${$name} must be positive, got {$seconds}");
            }
        }
        if ($maxConnectionsPerHost < 1 || $maxHeaderBytes < 64 || $maxBodyBytes < 0 || $maxRedirects < 0) {
            throw new \ValueError('ClientOptions: maxConnectionsPerHost >= 1, maxHeaderBytes >= 64, maxBodyBytes and maxRedirects >= 0');
        }
        foreach ($headers as $name => $value) {
            Internal\RequestWriter::assertHeader((string) $name, $value);
        }
    }
}
