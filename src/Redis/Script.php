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
}
