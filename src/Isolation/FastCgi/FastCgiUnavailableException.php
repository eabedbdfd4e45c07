<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/**
 * The responder could not be reached (connection refused, no such socket), or closed the connection before
 * answering with a single byte, or answered END_REQUEST with "overloaded" / "cannot multiplex". The caller
 * answers 502 Bad Gateway (503 with Retry-After when $overloaded).
 */
final class FastCgiUnavailableException extends FastCgiException
{
    public function __construct(
        string $message,
        /** False when nothing of the request reached the responder: it certainly did not run. */
        public readonly bool $mayHaveRun = false,
        /** The responder said it is overloaded (END_REQUEST FCGI_OVERLOADED or FCGI_CANT_MPX_CONN). */
        public readonly bool $overloaded = false,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, 0, $previous);
    }
}
