<?php

declare(strict_types=1);

namespace Kiln\Redis;

use Kiln\Redis\Resp\ErrorReply;

/** The server answered with an error (`-ERR ...`, `-WRONGTYPE ...`, `-NOSCRIPT ...`); the connection is fine. */
final class ErrorReplyException extends RedisException
{
    public function __construct(public readonly ErrorReply $reply)
    {
        parent::__construct('Redis: ' . $reply->message);
    }

    /** The first word of the error: `ERR`, `WRONGTYPE`, `NOSCRIPT`, `MOVED`, ... */
    public function code(): string
    {
        return $this->reply->code();
    }
}
