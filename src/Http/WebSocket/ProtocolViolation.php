<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/**
 * The peer broke the protocol; the server closes with $code and parses nothing more.
 *
 * 1002 for a framing error, 1007 for invalid UTF-8 in a text message or close reason (or corrupt compressed
 * data), 1009 for a message over WebSocketLimits::$maxMessageBytes. $reason is for the log and the close
 * frame (short, ASCII).
 */
final class ProtocolViolation
{
    public const PROTOCOL_ERROR = 1002;
    public const INVALID_DATA = 1007;
    public const TOO_BIG = 1009;

    public function __construct(
        public readonly int $code,
        public readonly string $reason,
    ) {}
}
