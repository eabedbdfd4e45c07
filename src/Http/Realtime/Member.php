<?php

declare(strict_types=1);

namespace Kiln\Http\Realtime;

/**
 * Something that can be in a Hub's rooms: a WebSocket connection, say.
 *
 * - memberId() MUST be unique among the members of one worker and stable for the member's life.
 * - deliver() MUST NOT block nor throw for a closed or slow member: it queues the payload or drops the
 *   member (a WebSocket closes a slow consumer with 1008). It is called from the loop, never from inside
 *   Hub::broadcast().
 */
interface Member
{
    public function memberId(): string;

    public function deliver(string $payload): void;
}
