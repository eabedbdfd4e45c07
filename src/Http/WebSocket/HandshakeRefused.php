<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

use Kiln\Http\HttpException;

/**
 * A request to a WebSocket endpoint that cannot be upgraded: not a WebSocket handshake (426), a bad key or
 * version (400, 426 with Sec-WebSocket-Version), an origin not allowed (403). Carries the status and headers
 * of the answer; the App renders it as any HTTP error.
 */
final class HandshakeRefused extends HttpException
{
    /** @param array<string, string> $headers */
    public function __construct(
        public readonly int $status,
        string $reason,
        public readonly array $headers = [],
    ) {
        parent::__construct($reason);
    }
}
