<?php

declare(strict_types=1);

namespace Kiln\Redis;

/** A Lua script, sent by its SHA1 (EVALSHA) and in full only when the server does not have it yet. */
final class Script
{
    public readonly string $sha1;

    public function __construct(public readonly string $source)
    {
        $this->sha1 = sha1($source);
    }

    /**
     * Runs the script by EVALSHA, sending its source with EVAL only when the server answers NOSCRIPT
     * (it restarted, or SCRIPT FLUSH ran).
     *
     * @param list<string> $keys
     * @param list<string|int|float> $args
     */
    public function run(Commands $redis, array $keys = [], array $args = []): mixed
    {
        try {
            return $redis->command('EVALSHA', $this->sha1, \count($keys), ...$keys, ...$args);
        } catch (ErrorReplyException $e) {
            if ($e->code() !== 'NOSCRIPT') {
                throw $e;
            }
        }

        return $redis->command('EVAL', $this->source, \count($keys), ...$keys, ...$args);
    }
}
