<?php

declare(strict_types=1);

namespace Kiln\Redis;

/** One entry of a Redis Stream: its id (`1700000000000-0`) and its fields. */
final class StreamEntry
{
    /** @param array<string, string> $fields */
    public function __construct(public readonly string $id, public readonly array $fields) {}

    /** @return list<self> entries of an XRANGE/XREADGROUP/XAUTOCLAIM reply; deleted entries (null fields) are left out */
    public static function listFrom(mixed $reply): array
    {
        $entries = [];
        foreach (\is_array($reply) ? $reply : [] as $entry) {
            if (\is_array($entry) && isset($entry[0]) && \is_string($entry[0]) && \is_array($entry[1] ?? null)) {
                $entries[] = new self($entry[0], Replies::pairs($entry[1]));
            }
        }

        return $entries;
    }
}
