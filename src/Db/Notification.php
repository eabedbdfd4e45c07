<?php

declare(strict_types=1);

namespace Kiln\Db;

/** One NOTIFY: the channel, its payload ('' when none was given) and the server process that sent it. */
final class Notification
{
    public function __construct(
        public readonly string $channel,
        public readonly string $payload,
        public readonly int $pid,
    ) {}
}
