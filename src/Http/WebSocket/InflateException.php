<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

use Kiln\Http\HttpException;

/** A compressed message could not be inflated: corrupt data (close 1007) or larger than allowed (1009). */
final class InflateException extends HttpException
{
    public function __construct(
        string $message,
        /** the close code the connection ends with: ProtocolViolation::INVALID_DATA or ::TOO_BIG */
        public readonly int $closeCode,
    ) {
        parent::__construct($message);
    }
}
