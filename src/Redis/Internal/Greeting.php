<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

use Kiln\Redis\RedisConfig;
use Kiln\Redis\Resp\ErrorReply;

/**
 * The commands that open a session (HELLO 3 or AUTH, then SELECT and CLIENT SETNAME) and the check
 * of their replies; shared by the loop client and the synchronous one.
 *
 * @internal
 */
final class Greeting
{
    private function __construct() {}

    /** @return list<list<string|int>> */
    public static function commands(RedisConfig $config): array
    {
        $commands = [];
        if ($config->protocol === 3) {
            $hello = ['HELLO', 3];
            if ($config->password !== null) {
                array_push($hello, 'AUTH', $config->username ?? 'default', $config->password);
            }
            if ($config->clientName !== null) {
                array_push($hello, 'SETNAME', $config->clientName);
            }
            $commands[] = $hello;
        } else {
            if ($config->password !== null) {
                $commands[] = $config->username === null ? ['AUTH', $config->password] : ['AUTH', $config->username, $config->password];
            }
            if ($config->clientName !== null) {
                $commands[] = ['CLIENT', 'SETNAME', $config->clientName];
            }
        }
        if ($config->database !== 0) {
            $commands[] = ['SELECT', $config->database];
        }

        return $commands;
    }

    /** @param list<mixed> $replies */
    public static function problem(array $replies): ?string
    {
        foreach ($replies as $reply) {
            if ($reply instanceof ErrorReply) {
                return $reply->message;
            }
        }

        return null;
    }
}
