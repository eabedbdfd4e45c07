<?php

declare(strict_types=1);

namespace Kiln\Http\Realtime\Internal;

use Kiln\Http\Sse\EventStream;

/**
 * One SSE topic in this worker: its open streams (where each stands is its Cursor), the bus subscription,
 * and the last events (already encoded) by id, for clients that reconnect with Last-Event-ID.
 *
 * @internal
 */
final class Topic
{
    /** @var array<int, EventStream> by object id */
    public array $streams = [];

    /** The timer that drops the topic once it has had no stream for a while. */
    public ?string $linger = null;

    /** @var array<int, string> encoded events by id, in id order */
    private array $buffer = [];

    public function __construct(public readonly int $subscription, private readonly int $size) {}

    public function remember(int $id, string $event): void
    {
        $last = array_key_last($this->buffer);
        $this->buffer[$id] = $event;
        if ($last !== null && $id < $last) {
            ksort($this->buffer); // publishers on other workers interleave: keep id order
        }
        if (\count($this->buffer) > $this->size) {
            unset($this->buffer[array_key_first($this->buffer)]);
        }
    }

    public function event(int $id): ?string
    {
        return $this->buffer[$id] ?? null;
    }

    /** @return list<int> the ids buffered above $id, in order */
    public function idsAfter(int $id): array
    {
        return array_values(array_filter(array_keys($this->buffer), static fn(int $buffered): bool => $buffered > $id));
    }
}
