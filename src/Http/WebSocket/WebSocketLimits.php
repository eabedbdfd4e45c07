<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/** What one WebSocket connection may receive. */
final class WebSocketLimits
{
    public function __construct(
        /**
         * Largest message in bytes, after fragments are joined and compressed data inflated: over it the
         * server closes with 1009, as soon as a frame header announces it, before buffering the payload.
         */
        public readonly int $maxMessageBytes = 1048576,
    ) {
        if ($maxMessageBytes < 125) {
            throw new \ValueError("maxMessageBytes must be at least 125 (a control frame's payload), $maxMessageBytes given");
        }
    }
}
