<?php

declare(strict_types=1);

namespace Kiln\Redis;

/**
 * Redis Streams for at-least-once delivery: add entries, read them as a member of a consumer group,
 * acknowledge them once handled, and claim those a dead consumer left pending.
 */
final class Streams
{
    public function __construct(private readonly RedisClient $client) {}

    /**
     * XADD; returns the id of the new entry.
     *
     * @param array<string, string|int|float> $fields
     * @param int|null $maxLength trim the stream to about this many entries (MAXLEN ~)
     */
    public function add(string $stream, array $fields, string $id = '*', ?int $maxLength = null): string
    {
        if ($fields === []) {
            throw new \ValueError('A stream entry needs at least one field');
        }
        $args = ['XADD', $stream];
        if ($maxLength !== null) {
            array_push($args, 'MAXLEN', '~', $maxLength);
        }
        $args[] = $id;
        foreach ($fields as $name => $value) {
            array_push($args, (string) $name, $value);
        }

        return Replies::text($this->client->command(...$args));
    }

    /** XGROUP CREATE, making the stream if needed; false if the group exists already. */
    public function createGroup(string $stream, string $group, string $startId = '$'): bool
    {
        try {
            $this->client->command('XGROUP', 'CREATE', $stream, $group, $startId, 'MKSTREAM');
        } catch (ErrorReplyException $e) {
            if ($e->code() === 'BUSYGROUP') {
                return false;
            }
            throw $e;
        }

        return true;
    }

    /**
     * XREADGROUP: new entries (id '>') or this consumer's pending ones (id '0') of each stream.
     *
     * @param array<string, string> $streams stream => id
     * @param float|null $block seconds to wait for entries; null: do not wait
     *
     * @return array<string, list<StreamEntry>> stream => entries (streams without entries left out)
     */
    public function readGroup(string $group, string $consumer, array $streams, int $count = 10, ?float $block = null): array
    {
        if ($streams === []) {
            throw new \ValueError('readGroup() needs at least one stream');
        }
        $args = ['XREADGROUP', 'GROUP', $group, $consumer, 'COUNT', $count];
        if ($block !== null) {
            array_push($args, 'BLOCK', max(1, (int) round($block * 1000)));
        }
        $args[] = 'STREAMS';
        foreach (array_keys($streams) as $name) {
            $args[] = (string) $name;
        }
        foreach ($streams as $id) {
            $args[] = $id;
        }
        $reply = $block === null ? $this->client->command(...$args) : $this->client->blockingCommand($block, $args);

        return self::byStream($reply);
    }

    public function ack(string $stream, string $group, string ...$ids): int
    {
        if ($ids === []) {
            return 0;
        }

        return Replies::integer($this->client->command('XACK', $stream, $group, ...array_values($ids)));
    }

    /**
     * XAUTOCLAIM: takes over entries pending longer than $minIdle seconds in other consumers.
     *
     * @return array{next: string, entries: list<StreamEntry>, deleted: list<string>} next: the cursor for the next call ('0-0' when done)
     */
    public function autoClaim(string $stream, string $group, string $consumer, float $minIdle, string $start = '0-0', int $count = 100): array
    {
        $reply = $this->client->command('XAUTOCLAIM', $stream, $group, $consumer, max(0, (int) round($minIdle * 1000)), $start, 'COUNT', $count);
        if (!\is_array($reply)) {
            throw new ProtocolException('XAUTOCLAIM answered with ' . get_debug_type($reply));
        }
        $deleted = [];
        foreach (\is_array($reply[2] ?? null) ? $reply[2] : [] as $id) {
            $deleted[] = Replies::text($id);
        }

        return ['next' => Replies::text($reply[0] ?? '0-0'), 'entries' => StreamEntry::listFrom($reply[1] ?? []), 'deleted' => $deleted];
    }

    /** @return array<string, list<StreamEntry>> */
    private static function byStream(mixed $reply): array
    {
        $result = [];
        if (!\is_array($reply)) {
            return $result;
        }
        if (!array_is_list($reply)) {
            foreach ($reply as $stream => $entries) {
                $result[(string) $stream] = StreamEntry::listFrom($entries);
            }

            return $result;
        }
        foreach ($reply as $item) {
            if (\is_array($item) && isset($item[0])) {
                $result[Replies::text($item[0])] = StreamEntry::listFrom($item[1] ?? []);
            }
        }

        return $result;
    }
}
