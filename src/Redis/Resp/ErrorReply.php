<?php

declare(strict_types=1);

namespace Kiln\Redis\Resp;

/** An error reply (`-ERR ...` or RESP3 blob error `!`), as a value: it may sit inside an array (EXEC). */
final class ErrorReply
{
    public function __construct(public readonly string $message) {}

    /** The first word: `ERR`, `WRONGTYPE`, `MOVED`, `ASK`, `NOSCRIPT`, ... */
    public function code(): string
    {
        return explode(' ', $this->message, 2)[0];
    }
}
