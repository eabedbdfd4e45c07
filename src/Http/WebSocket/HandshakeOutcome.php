<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/**
 * The answer to a WebSocket opening handshake: 101 with the headers to send, or a refusal (400, 403, 426)
 * with a human-readable reason and, for 426, the Sec-WebSocket-Version the server speaks.
 */
final class HandshakeOutcome
{
    /** @param array<string, string> $headers */
    private function __construct(
        public readonly bool $accepted,
        public readonly int $status,
        public readonly array $headers,
        public readonly ?string $subprotocol,
        public readonly ?PerMessageDeflate $deflate,
        public readonly string $reason,
    ) {}

    /** @param array<string, string> $headers */
    public static function accepted(array $headers, ?string $subprotocol, ?PerMessageDeflate $deflate): self
    {
        return new self(true, 101, $headers, $subprotocol, $deflate, '');
    }

    /** @param array<string, string> $headers */
    public static function refused(int $status, string $reason, array $headers = []): self
    {
        return new self(false, $status, $headers, null, null, $reason);
    }
}
