<?php

declare(strict_types=1);

namespace Kiln\Http;

/**
 * A request body the client got wrong: invalid JSON, a malformed multipart body, a body or a count over
 * a BodyLimits limit. getCode() is the HTTP status to answer with: 400, or 413 for a limit.
 */
final class BadRequestBodyException extends HttpException
{
    public function __construct(string $message, int $status = 400, ?\Throwable $previous = null)
    {
        if ($status !== 400 && $status !== 413) {
            throw new \ValueError("BadRequestBodyException is a 400 or a 413, got $status");
        }
        parent::__construct($message, $status, $previous);
    }

    public function status(): int
    {
        return $this->getCode();
    }
}
