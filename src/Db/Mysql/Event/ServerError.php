<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Event;

/** An ERR packet: the command failed (or, during the handshake, the login did). */
final class ServerError
{
    public function __construct(
        public readonly int $code,
        public readonly string $sqlState,
        public readonly string $message,
    ) {}
}
