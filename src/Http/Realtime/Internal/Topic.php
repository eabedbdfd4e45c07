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

    /**
     * The buffered ids in id order, by position from $oldest on: the next to drop is found at once. Taking the
     * buffer's first key instead walks over every slot the dropped events left (13 µs an event at a replay of
     * 10,000).
     *
     * @var array<int, int>
     */
    private array $order = [];

    private int $oldest = 0;

    /**
     * @param int $seen the topic's id when the worker began to follow it: the events after it are this worker's to
     *        deliver (Hub::catchUp() reads those a gap of the bus kept from it)
     */
    public function __construct(public readonly int $subscription, private readonly int $size, private int $seen = 0) {}

    /** The greatest id this worker had of the topic (or the topic's id when it began to follow it). */
    public function seen(): int
    {
        return $this->seen;
    }

    /** The topic's ids began again (its log was lost): the events after $id are the ones to come. */
    public function restartAt(int $id): void
    {
        $this->seen = $id;
    }

    /** Whether this very event came already (by the bus, or read after a gap). */
    public function has(int $id, string $event): bool
    {
        return ($this->buffer[$id] ?? null) === $event;
    }

    public function remember(int $id, string $event): void
    {
        if ($id > $this->seen) {
            $this->seen = $id;
        }
        if (isset($this->buffer[$id])) {
            $this->buffer[$id] = $event;
            return;
        }
        $last = array_key_last($this->buffer);
        $this->buffer[$id] = $event;
        if ($last !== null && $id < $last) {
            ksort($this->buffer); // publishers on other workers interleave: keep id order
            $this->order = array_keys($this->buffer);
            $this->oldest = 0;
        } else {
            $this->order[$this->oldest + \count($this->buffer) - 1] = $id;
        }
        if (\count($this->buffer) > $this->size) {
            unset($this->buffer[$this->order[$this->oldest]], $this->order[$this->oldest]);
            $this->oldest++;
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
