<?php

declare(strict_types=1);

namespace Kiln\Redis\Resp;

/** A RESP3 push (`>`): out-of-band data (pub/sub messages, invalidations), not the reply to a command. */
final class Push
{
    /** @param list<mixed> $items the first is the kind: `message`, `pmessage`, `invalidate`, ... */
    public function __construct(public readonly array $items) {}

    public function kind(): string
    {
        $kind = $this->items[0] ?? '';

        return \is_string($kind) ? $kind : '';
    }
}
