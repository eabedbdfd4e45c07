<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/**
 * The peer's close frame, already validated: a code one may send (1000-1003, 1007-1014, 3000-4999), or 1005
 * when the frame had no payload, and a UTF-8 reason. Nothing after it is parsed.
 */
final class Close
{
    public const NO_STATUS = 1005;

    public function __construct(
        public readonly int $code,
        public readonly string $reason,
    ) {}
}
