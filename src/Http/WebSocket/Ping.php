<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/** A ping from the peer (at most 125 bytes); the connection answers it with a pong of the same payload. */
final class Ping
{
    public function __construct(public readonly string $payload) {}
}
