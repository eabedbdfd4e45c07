<?php

declare(strict_types=1);

namespace Kiln\Http\Realtime\Internal;

/**
 * Where one stream stands in each topic it follows: the greatest id it was sent (or, for a topic with nothing
 * sent yet, the id the topic was at when the stream began to follow it), and the id it was replayed up to,
 * so that an event both replayed and then delivered by the bus is sent once. Topics subscribed before the
 * stream's head is out wait in $pending, to be followed together when it starts.
 *
 * @internal
 */
final class Cursor
{
    public bool $started = false;

    /** @var array<string, true> topics to follow once the stream starts */
    public array $pending = [];

    /** @var array<string, int> by topic, in the order the stream followed them */
    private array $positions = [];

    /** @var array<string, int> by topic */
    private array $replayedTo = [];

    public function follow(string $topic, int $position): void
    {
        $this->positions[$topic] = $position;
        $this->replayedTo[$topic] = 0;
    }

    public function follows(string $topic): bool
    {
        return isset($this->positions[$topic]);
    }

    public function replayed(string $topic, int $id): void
    {
        $this->replayedTo[$topic] = $id;
    }

    /** The topic's ids began again: every event of it from now on is owed, whatever was replayed before. */
    public function restart(string $topic): void
    {
        if (isset($this->positions[$topic])) {
            $this->positions[$topic] = 0;
            $this->replayedTo[$topic] = 0;
        }
    }

    public function forget(string $topic): void
    {
        unset($this->positions[$topic], $this->replayedTo[$topic], $this->pending[$topic]);
    }

    /** @return list<string> */
    public function topics(): array
    {
        return array_map('strval', array_keys($this->positions));
    }

    /** Whether a live event is still to be sent (it was not replayed). */
    public function wants(string $topic, int $id): bool
    {
        return $id > ($this->replayedTo[$topic] ?? \PHP_INT_MAX);
    }

    /**
     * The event as this stream sends it: as encoded, with the topic's own id, while the stream follows one
     * topic; with every topic's position in place of that id when it follows more (StreamId).
     */
    public function frame(string $topic, int $id, string $event): string
    {
        if (isset($this->positions[$topic]) && $id > $this->positions[$topic]) {
            $this->positions[$topic] = $id; // the greatest: an event a publisher elsewhere sent late is not replayed again
        }
        $newline = strpos($event, "\n");
        if (\count($this->positions) < 2 || $newline === false || !str_starts_with($event, 'id: ')) {
            return $event;
        }
        return 'id: ' . StreamId::encode($this->positions) . substr($event, $newline);
    }
}
