<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/** A whole data message from the peer: fragments joined, inflated when compressed, text checked as UTF-8. */
final class Message
{
    public function __construct(
        public readonly string $payload,
        /** false for a text message (valid UTF-8), true for a binary one */
        public readonly bool $binary,
    ) {}
}
