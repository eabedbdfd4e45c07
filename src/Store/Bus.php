<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * Publish / subscribe between the worker processes of a node (later, through Redis, between nodes).
 * Channels are opaque strings; the real-time layer names rooms and topics on top of them.
 *
 * Contract:
 * - publish() MUST deliver the payload to every subscriber of the channel in every process attached to the
 *   bus, this one included, exactly once each, and in the order this process published. It MUST NOT call a
 *   listener before it returns: listeners run later, from the event loop, never inside publish().
 * - publish() MUST NOT block the loop. When the message cannot be handed on (the bus is closed, a peer's
 *   queue is past its bound) it throws BusException naming what was lost; it never drops a message silently.
 * - A listener MUST be quick and MUST NOT throw; an implementation reports a listener's exception to the
 *   loop's error handler and carries on with the next listener.
 * - subscribe() returns an id for unsubscribe(); unsubscribing an unknown id is a no-op. A listener added
 *   while a message is being delivered MAY or MAY NOT see that message; one removed then MUST NOT be
 *   called again, for that message or any later one.
 * - close() detaches this process: later publish() calls throw BusException.
 */
interface Bus
{
    public function publish(string $channel, string $payload): void;

    /** @param \Closure(string $channel, string $payload): void $listener */
    public function subscribe(string $channel, \Closure $listener): int;

    public function unsubscribe(int $id): void;

    public function close(): void;
}
