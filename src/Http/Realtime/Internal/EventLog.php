<?php

declare(strict_types=1);

namespace Kiln\Http\Realtime\Internal;

use Kiln\Store\SharedState;

/**
 * The topics' ids and kept events in the node's SharedState: a counter per topic, which every worker (and,
 * on a Redis store, every node) takes the next id from, and the last $size events of each topic under their
 * ids for $keep seconds, when the store holds values that large.
 *
 * @internal
 */
final class EventLog
{
    public function __construct(
        private readonly SharedState $state,
        private readonly int $size,
        private readonly float $keep,
    ) {}

    /**
     * Takes the topic's next id; keeps the event, prefixed with its `id:` line, under it.
     *
     * @return array{int, string} the id and the event with its `id:` line
     */
    public function append(string $topic, string $encoded): array
    {
        $id = self::counter($this->state->update(self::counterKey($topic), static fn(?array $last): array => [self::counter($last) + 1], 0));
        $encoded = "id: $id\n" . $encoded;
        if ($this->size > 0) {
            try {
                $this->state->update(self::eventKey($topic, $id), static fn(): array => [$encoded], max(1, (int) ceil($this->keep)));
            } catch (\ValueError) {
                // Too large for this store: the workers' own buffers replay it.
            }
            if ($id > $this->size) {
                $this->state->delete(self::eventKey($topic, $id - $this->size));
            }
        }
        return [$id, $encoded];
    }

    /** The topic's last id (0 before its first event). */
    public function last(string $topic): int
    {
        return self::counter($this->state->get(self::counterKey($topic)));
    }

    /**
     * The events after $after up to $upTo, from the store or else the worker's buffer, in id order.
     *
     * @return array<int, string> encoded, by id
     */
    public function between(string $topic, Topic $entry, int $after, int $upTo): array
    {
        $ids = $entry->idsAfter($after);
        for ($id = max($after, $upTo - $this->size) + 1; $id <= $upTo; $id++) {
            $ids[] = $id;
        }
        $ids = array_unique($ids);
        sort($ids);
        $events = [];
        foreach ($ids as $id) {
            $stored = $this->state->get(self::eventKey($topic, $id));
            $event = \is_string($stored[0] ?? null) ? $stored[0] : $entry->event($id);
            if ($event !== null) {
                $events[$id] = $event;
            }
        }
        return $events;
    }

    private static function counterKey(string $topic): string
    {
        return 'kiln.sse.id:' . $topic;
    }

    private static function eventKey(string $topic, int $id): string
    {
        return "kiln.sse.event:$id:" . $topic;
    }

    /** @param ?array<mixed> $value */
    private static function counter(?array $value): int
    {
        $count = $value[0] ?? 0;
        return \is_int($count) ? $count : 0;
    }
}
