<?php

declare(strict_types=1);

namespace Kiln\Http\Realtime;

use Kiln\Http\Realtime\Internal\Cursor;
use Kiln\Http\Realtime\Internal\EventLog;
use Kiln\Http\Realtime\Internal\Room;
use Kiln\Http\Realtime\Internal\StreamId;
use Kiln\Http\Realtime\Internal\Topic;
use Kiln\Http\Sse\EventEncoder;
use Kiln\Http\Sse\EventStream;
use Kiln\Loop\Loop;
use Kiln\Store\Bus;
use Kiln\Store\ReconnectingBus;
use Kiln\Store\SharedState;

/**
 * Rooms and topics of one worker, joined to the other workers of the node through the Bus.
 *
 * - broadcast() reaches every member of the room in every worker of the node, the sender included,
 *   exactly once, in the order this worker broadcast (the Bus's guarantees); members get it from the loop.
 * - publish() gives the event a node-wide id (an atomic counter per topic in the node's SharedState), so
 *   every worker sends it with the same `id:`, and keeps it there too for $replayKeep seconds, the last
 *   $replay of each topic (when the store holds values that large: APCu does, the /dev/shm table only
 *   small ones). Each worker following the topic also keeps its last $replay events. A stream that starts
 *   with a Last-Event-ID first gets the events with a greater id, from either, in id order (an id older
 *   than what is kept gets what is left; one that is not a number gets none), then the live ones, each once.
 * - A stream that follows several topics sends, in place of an event's own id, the position it has reached
 *   in each of them (StreamId), so that its Last-Event-ID says where to replay each topic from. The topics
 *   subscribed before its head is out are followed together, before anything is replayed.
 * - The worker follows a room's bus channel only while it has members there; a topic's, while it has
 *   streams there and for $replayKeep seconds after the last one ends.
 * - A bus that lost its connection and follows its channels again (ReconnectingBus: Redis) did not carry what was
 *   published meanwhile: the topics' events of that gap are read from the SharedState and delivered then, each once.
 *   A topic whose ids went back (Redis restarted without its data) starts again: its streams are owed every event.
 *
 * One Hub per worker (the App makes it): its members and streams are this worker's own.
 */
final class Hub
{
    /** A room's bus channel is this and its name (ScriptPublisher::broadcast() publishes on it). */
    public const ROOM = 'room:';
    private const TOPIC = 'topic:';

    /**
     * Topics kept after their last stream ended, at most: past it the longest kept is dropped at once, so
     * clients that open and leave streams on ever new topic names cannot make a worker follow them all.
     */
    public const KEPT_TOPICS = 1000;

    /** @var array<string, Room> */
    private array $rooms = [];

    /** @var array<string, array<string, true>> member id => the rooms it is in */
    private array $memberships = [];

    /** @var array<string, Topic> */
    private array $topics = [];

    /** @var array<string, true> the topics kept with no stream, oldest first */
    private array $kept = [];

    /**
     * Weak, so that a stream whose response never started (its handler returned another) is not held here.
     *
     * @var \WeakMap<EventStream, Cursor>
     */
    private \WeakMap $cursors;

    private readonly EventLog $log;

    public function __construct(
        private readonly Bus $bus,
        SharedState $state,
        private readonly int $replay = 100,
        private readonly float $replayKeep = 60.0,
    ) {
        if ($replay < 0 || $replayKeep < 0) {
            throw new \ValueError('A hub keeps 0 or more events for replay, for 0 or more seconds');
        }
        $this->cursors = new \WeakMap();
        $this->log = new EventLog($state, $replay, $replayKeep);
        if ($bus instanceof ReconnectingBus) {
            // At once, before the events that follow the resubscription: the log is read without suspending.
            $bus->onResubscribed($this->catchUp(...));
        }
    }

    public function join(string $room, Member $member): void
    {
        $id = $member->memberId();
        $entry = $this->rooms[$room] ??= new Room($this->bus->subscribe(self::ROOM . $room, $this->deliverToRoom(...)));
        $entry->members[$id] = $member;
        $this->memberships[$id][$room] = true;
    }

    public function leave(string $room, Member $member): void
    {
        $id = $member->memberId();
        $entry = $this->rooms[$room] ?? null;
        if ($entry === null || !isset($entry->members[$id])) {
            return;
        }
        unset($entry->members[$id], $this->memberships[$id][$room]);
        if (($this->memberships[$id] ?? []) === []) {
            unset($this->memberships[$id]);
        }
        if ($entry->members === []) {
            $this->bus->unsubscribe($entry->subscription);
            unset($this->rooms[$room]);
        }
    }

    /** Takes the member out of every room it is in (a connection that closed). */
    public function leaveAll(Member $member): void
    {
        foreach (array_keys($this->memberships[$member->memberId()] ?? []) as $room) {
            $this->leave((string) $room, $member);
        }
    }

    public function broadcast(string $room, string $payload): void
    {
        $this->bus->publish(self::ROOM . $room, $payload);
    }

    /** Members of the room in this worker. */
    public function members(string $room): int
    {
        return \count($this->rooms[$room]->members ?? []);
    }

    /** @return list<string> the rooms the member is in */
    public function roomsOf(Member $member): array
    {
        return array_map('strval', array_keys($this->memberships[$member->memberId()] ?? []));
    }

    /**
     * Sends an event to every stream subscribed to the topic on every worker of the node; returns its id.
     * An event name with CR or LF is a \ValueError (see EventEncoder).
     */
    public function publish(string $topic, string $data, ?string $event = null): string
    {
        // EventEncoder refuses a bad name here, in the publisher.
        [$id, $encoded] = $this->log->append($topic, EventEncoder::event($data, $event));
        $this->bus->publish(self::TOPIC . $topic, $id . "\n" . $encoded);
        return (string) $id;
    }

    /**
     * Adds the stream to the topic once its head is out, after replaying what it missed (its Last-Event-ID);
     * it leaves the topic when it ends. Subscribing twice is once.
     */
    public function subscribe(string $topic, EventStream $stream): void
    {
        if (!$stream->isOpen()) {
            return;
        }
        $cursor = $this->cursors[$stream] ?? $this->cursorFor($stream);
        if ($cursor->started) {
            $this->attach($stream, $cursor, [$topic]);
        } else {
            $cursor->pending[$topic] = true;
        }
    }

    public function unsubscribe(string $topic, EventStream $stream): void
    {
        ($this->cursors[$stream] ?? null)?->forget($topic);
        $entry = $this->topics[$topic] ?? null;
        $key = spl_object_id($stream);
        if ($entry === null || !isset($entry->streams[$key])) {
            return;
        }
        unset($entry->streams[$key]);
        if ($entry->streams === []) {
            $this->keep($topic, $entry);
        }
    }

    /** The stream's first subscription: it follows its topics once it starts, and leaves them when it ends. */
    private function cursorFor(EventStream $stream): Cursor
    {
        $cursor = $this->cursors[$stream] = new Cursor();
        $stream->onClose(function (EventStream $stream): void {
            foreach (($this->cursors[$stream] ?? null)?->topics() ?? [] as $topic) {
                $this->unsubscribe($topic, $stream);
            }
        });
        $stream->onStart(function (EventStream $stream): void {
            $cursor = $this->cursors[$stream] ?? null;
            if ($cursor !== null) {
                $cursor->started = true;
                [$topics, $cursor->pending] = [array_map('strval', array_keys($cursor->pending)), []];
                $this->attach($stream, $cursor, $topics);
            }
        });
        return $cursor;
    }

    /** The topic has no stream left: it is followed on for $replayKeep seconds, for clients that come back. */
    private function keep(string $topic, Topic $entry): void
    {
        $entry->linger = Loop::delay($this->replayKeep, function () use ($topic): void {
            $this->drop($topic);
        });
        Loop::unreference($entry->linger);
        $this->kept[$topic] = true;
        if (\count($this->kept) > self::KEPT_TOPICS) {
            $this->drop((string) array_key_first($this->kept));
        }
    }

    private function drop(string $topic): void
    {
        $entry = $this->topics[$topic] ?? null;
        unset($this->kept[$topic]);
        if ($entry === null || $entry->streams !== []) {
            return;
        }
        if ($entry->linger !== null) {
            Loop::cancel($entry->linger);
            $entry->linger = null;
        }
        $this->bus->unsubscribe($entry->subscription);
        unset($this->topics[$topic]);
    }

    /** Open streams subscribed to the topic in this worker. */
    public function subscribers(string $topic): int
    {
        return \count($this->topics[$topic]->streams ?? []);
    }

    /** Whether this worker follows the topic now (it has streams there, or had them within $replayKeep). */
    public function follows(string $topic): bool
    {
        return isset($this->topics[$topic]);
    }

    /**
     * The stream follows the topics: each gets its position first (from the Last-Event-ID, read against every
     * topic the stream follows, or the topic's id now), so that the replayed events already carry them all.
     *
     * @param list<string> $topics
     */
    private function attach(EventStream $stream, Cursor $cursor, array $topics): void
    {
        $topics = array_values(array_filter(array_unique($topics), static fn(string $topic): bool => !$cursor->follows($topic)));
        $last = StreamId::decode($stream->lastEventId(), [...$cursor->topics(), ...$topics]);
        $current = [];
        foreach ($topics as $topic) {
            $current[$topic] = $this->log->last($topic);
            // An id past the topic's is from before the node restarted (ids began again): nothing to replay.
            $cursor->follow($topic, min($last[$topic] ?? $current[$topic], $current[$topic]));
        }
        foreach ($topics as $topic) {
            $entry = $this->topics[$topic] ??= new Topic($this->bus->subscribe(self::TOPIC . $topic, $this->deliverToTopic(...)), $this->replay, $current[$topic]);
            if ($entry->linger !== null) {
                Loop::cancel($entry->linger);
                $entry->linger = null;
                unset($this->kept[$topic]);
            }
            if (isset($last[$topic]) && $stream->isOpen()) {
                $cursor->replayed($topic, $this->replay($stream, $cursor, $topic, $this->log->between($topic, $entry, $last[$topic], $current[$topic])));
            }
            if ($stream->isOpen()) {
                $entry->streams[spl_object_id($stream)] = $stream;
            } elseif ($entry->streams === []) {
                $this->keep($topic, $entry); // the replay was too much for the client
            }
        }
    }

    /**
     * Sends the stream what it missed; returns the last id sent (the live events up to it are not sent again).
     *
     * @param array<int, string> $events by id, in id order
     */
    private function replay(EventStream $stream, Cursor $cursor, string $topic, array $events): int
    {
        $sent = 0;
        foreach ($events as $id => $event) {
            if ($stream->write($cursor->frame($topic, $id, $event))) {
                $sent = $id;
            }
        }
        return $sent;
    }

    private function deliverToRoom(string $channel, string $payload): void
    {
        $entry = $this->rooms[substr($channel, \strlen(self::ROOM))] ?? null;
        foreach ($entry->members ?? [] as $member) {
            try {
                $member->deliver($payload);
            } catch (\Throwable $e) {
                Loop::reportError($e); // one member's failure is not the others'
            }
        }
    }

    private function deliverToTopic(string $channel, string $payload): void
    {
        $topic = substr($channel, \strlen(self::TOPIC));
        $entry = $this->topics[$topic] ?? null;
        if ($entry === null) {
            return;
        }
        $newline = strpos($payload, "\n");
        if ($newline === false) {
            return; // not from a Hub
        }
        $this->deliver($topic, $entry, (int) substr($payload, 0, $newline), substr($payload, $newline + 1));
    }

    private function deliver(string $topic, Topic $entry, int $id, string $event): void
    {
        if ($entry->has($id, $event)) {
            return; // it came already: live, or read after a gap of the bus (catchUp())
        }
        $entry->remember($id, $event);
        foreach ($entry->streams as $stream) {
            $cursor = $this->cursors[$stream] ?? null;
            if ($cursor !== null && $cursor->wants($topic, $id)) {
                $stream->write($cursor->frame($topic, $id, $event));
            }
        }
    }

    /**
     * The bus follows its channels again after a gap (its connection to Redis broke): the events each topic got
     * meanwhile, read from the shared log, go to the streams now (after later ones, if some came first). A topic
     * whose id is below the last this worker had began again (Redis lost its data): its streams are owed all of it.
     */
    private function catchUp(): void
    {
        foreach ($this->topics as $topic => $entry) {
            $topic = (string) $topic;
            try {
                $now = $this->log->last($topic);
                $after = $entry->seen();
                if ($now < $after) {
                    $after = 0;
                    $entry->restartAt(0);
                    foreach ($entry->streams as $stream) {
                        ($this->cursors[$stream] ?? null)?->restart($topic);
                    }
                }
                $missed = $now > $after ? $this->log->between($topic, $entry, $after, $now) : [];
            } catch (\Throwable $e) {
                Loop::reportError($e); // Redis went away again: the next resubscription tries again
                continue;
            }
            foreach ($missed as $id => $event) {
                $this->deliver($topic, $entry, $id, $event);
            }
        }
    }
}
