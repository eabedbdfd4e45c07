<?php

declare(strict_types=1);

namespace Kiln\Redis;

/** Channel (SUBSCRIBE), pattern (PSUBSCRIBE) or shard channel (SSUBSCRIBE, Redis 7 Cluster). */
enum SubscriptionKind: string
{
    case Channel = 'subscribe';
    case Pattern = 'psubscribe';
    case Shard = 'ssubscribe';

    public function unsubscribeCommand(): string
    {
        return match ($this) {
            self::Channel => 'UNSUBSCRIBE',
            self::Pattern => 'PUNSUBSCRIBE',
            self::Shard => 'SUNSUBSCRIBE',
        };
    }
}
