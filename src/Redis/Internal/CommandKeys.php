<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

/**
 * The key a command is routed by in a Cluster (its first key), or null for commands without keys.
 * Covers the usual commands; others are routed by their first argument.
 *
 * @internal
 */
final class CommandKeys
{
    private const KEYLESS = ['PING', 'ECHO', 'INFO', 'TIME', 'DBSIZE', 'PUBLISH', 'CLUSTER', 'SCRIPT', 'CONFIG', 'CLIENT', 'COMMAND', 'HELLO', 'AUTH', 'FLUSHALL', 'FLUSHDB', 'ROLE', 'LASTSAVE', 'FUNCTION', 'MULTI', 'EXEC', 'DISCARD', 'RANDOMKEY', 'SCAN', 'KEYS', 'WAIT'];

    private function __construct() {}

    /** @param list<string|int|float> $args */
    public static function routingKey(array $args): ?string
    {
        $name = strtoupper((string) $args[0]);
        if (\in_array($name, self::KEYLESS, true)) {
            return null;
        }
        $index = match ($name) {
            'EVAL', 'EVALSHA', 'EVAL_RO', 'EVALSHA_RO', 'FCALL', 'FCALL_RO' => ((int) ($args[2] ?? 0)) > 0 ? 3 : null,
            'XREAD', 'XREADGROUP' => self::afterStreams($args),
            'XGROUP', 'XINFO', 'OBJECT', 'MEMORY' => 2,
            default => 1,
        };

        return $index !== null && isset($args[$index]) ? (string) $args[$index] : null;
    }

    /** @param list<string|int|float> $args */
    private static function afterStreams(array $args): ?int
    {
        foreach ($args as $i => $arg) {
            if (\is_string($arg) && strtoupper($arg) === 'STREAMS') {
                return $i + 1;
            }
        }

        return null;
    }
}
