<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Event;

/** The handshake is done: the connection takes commands. */
final class Ready
{
    public function __construct(
        public readonly string $serverVersion,
        public readonly int $connectionId,
    ) {}
}
