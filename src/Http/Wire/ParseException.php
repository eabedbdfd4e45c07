<?php

declare(strict_types=1);

namespace Kiln\Http\Wire;

use Kiln\Http\HttpException;

/**
 * The bytes on the wire are not an acceptable HTTP/1.1 request. Carries the status to answer with
 * (400, 413, 414, 431, 501, 505); the connection answers it and closes.
 */
final class ParseException extends HttpException
{
    public function __construct(
        public readonly int $status,
        string $message,
        /** The head, when it was read whole and only what it announces is refused (a body over the limit). */
        public readonly ?RequestHead $head = null,
    ) {
        parent::__construct($message, $status);
    }
}
