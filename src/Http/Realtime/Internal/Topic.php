<?php

declare(strict_types=1);

namespace Kiln\Http\Realtime\Internal;

use Kiln\Http\Sse\EventStream;

/**
 * One SSE topic in this worker: its open streams, the bus subscription, and the last events (already
 * encoded), kept in id order for clients that reconnect with Last-Event-ID.
 *
 * @internal
 */
final class Topic
{
    /** @var array<int, EventStream> by object id */
    public array $streams = [];

    /** The timer that drops the topic once it has had no stream for a while. */
    public ?string $linger = null;

    /** @var list<array{int, string}> id and encoded event, oldest first */
    private array $buffer = [];

    public function __construct(public readonly int $subscription, private readonly int $size) {}

    public function remember(int $id, string $event): void
    {
        $at = \count($this->buffer);
        // Publishers on other workers may interleave: keep id order (nearly always: append).
        while ($at > 0 && $this->buffer[$at - 1][0] > $id) {
            $at--;
        }
        array_splice($this->buffer, $at, 0, [[$id, $event]]);
        if (\count($this->buffer) > $this->size) {
            array_shift($this->buffer);
        }
    }

    /** @return list<string> the encoded events with an id above $id, in id order */
    public function since(int $id): array
    {
        $events = [];
        foreach ($this->buffer as [$eventId, $event]) {
            if ($eventId > $id) {
                $events[] = $event;
            }
        }
        return $events;
    }
}
