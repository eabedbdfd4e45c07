<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/** A pong from the peer, solicited or not (RFC 6455 §5.5.3 allows unsolicited pongs as heartbeats). */
final class Pong
{
    public function __construct(public readonly string $payload) {}
}
