<?php

declare(strict_types=1);

namespace Kiln\Http\Realtime\Internal;

/**
 * The `id:` of a stream that follows several topics, and how a Last-Event-ID is read back, sans-I/O.
 *
 * Each topic numbers its events on its own, so one number cannot say where a stream that follows two of
 * them stands. Such a stream's id names every topic's position instead: `tag:position` pairs joined by
 * dots (`1x3f9k:5.q8d2w0:1`), a tag being the topic's CRC-32 in base 36, the same on every worker and node.
 * A stream that follows one topic keeps that topic's own id (`5`), as it always had.
 *
 * decode() never fails: an id that is too long, malformed, or names none of the stream's topics gives no
 * position (the stream then starts from the live events, as without Last-Event-ID); a plain number is a
 * position only for a stream that follows one topic, since it cannot say which topic it counted.
 *
 * @internal
 */
final class StreamId
{
    /** Topics an id names at most (the first ones the stream followed): it is sent with every event. */
    public const MAX_TOPICS = 32;

    /** A tag (7), a colon, a position (18 digits), a dot: the longest id that decode() reads. */
    public const MAX_LENGTH = self::MAX_TOPICS * 27 - 1;

    private const PATTERN = '/\A[0-9a-z]{1,7}:[0-9]{1,18}(?:\.[0-9a-z]{1,7}:[0-9]{1,18})*\z/';

    public static function tag(string $topic): string
    {
        return base_convert(hash('crc32b', $topic), 16, 36);
    }

    /** @param array<string, int> $positions by topic, in the order the stream followed them */
    public static function encode(array $positions): string
    {
        $pairs = [];
        foreach (\array_slice($positions, 0, self::MAX_TOPICS, true) as $topic => $position) {
            $pairs[] = self::tag((string) $topic) . ':' . $position;
        }
        return implode('.', $pairs);
    }

    /**
     * @param list<string> $topics all the topics the stream follows
     * @return array<string, int> the position the id gives for each of them it names
     */
    public static function decode(?string $id, array $topics): array
    {
        if ($id === null || $id === '' || \strlen($id) > self::MAX_LENGTH) {
            return [];
        }
        if (ctype_digit($id)) {
            return \count($topics) === 1 && \strlen($id) < 19 ? [$topics[0] => (int) $id] : [];
        }
        if (preg_match(self::PATTERN, $id) !== 1) {
            return [];
        }
        $byTag = [];
        foreach (explode('.', $id) as $pair) {
            [$tag, $position] = explode(':', $pair);
            $byTag[$tag] = \array_key_exists($tag, $byTag) ? null : (int) $position; // named twice: neither
        }
        $named = [];
        foreach ($topics as $topic) {
            $named[self::tag($topic)][] = $topic;
        }
        $positions = [];
        foreach ($named as $tag => $sharing) {
            $position = $byTag[(string) $tag] ?? null;
            if ($position !== null && \count($sharing) === 1) { // two topics with one tag: neither is known
                $positions[$sharing[0]] = $position;
            }
        }
        return $positions;
    }
}
