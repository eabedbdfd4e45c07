<?php

declare(strict_types=1);

namespace Kiln\Redis;

/**
 * What a backend needs of Redis, whichever client carries it: RedisClient (on the loop, suspending the
 * Fiber) or SyncRedisClient (blocking). A store written against this runs in handlers and in blocking
 * contexts alike.
 *
 * - command() returns the reply as Resp\RespParser maps it, and throws ErrorReplyException for an error
 *   reply; pipeline() sends all commands in one write on one connection (so MULTI ... EXEC in one pipeline
 *   is a transaction) and returns error replies as Resp\ErrorReply values in their place.
 * - Both MUST NOT send a command again after its connection failed with it in flight: they throw
 *   ConnectionLostException, and the caller decides whether a retry is safe.
 */
interface Commands
{
    /** @throws RedisException */
    public function command(string|int|float ...$args): mixed;

    /**
     * @param list<list<string|int|float>> $commands
     *
     * @return list<mixed>
     *
     * @throws RedisException
     */
    public function pipeline(array $commands): array;
}
