<?php

declare(strict_types=1);

namespace Kiln\Redis;

/** Shapes of replies that differ between RESP2 and RESP3, made one. */
final class Replies
{
    private function __construct() {}

    /**
     * A flat [k1, v1, k2, v2] (RESP2) or a map (RESP3) as [k1 => v1, k2 => v2], values as strings.
     *
     * @return array<string, string>
     */
    public static function pairs(mixed $reply): array
    {
        if (!\is_array($reply)) {
            return [];
        }
        $pairs = [];
        if (array_is_list($reply)) {
            for ($i = 0; $i + 1 < \count($reply); $i += 2) {
                $pairs[self::text($reply[$i])] = self::text($reply[$i + 1]);
            }

            return $pairs;
        }
        foreach ($reply as $key => $value) {
            $pairs[(string) $key] = self::text($value);
        }

        return $pairs;
    }

    /** An integer reply (or a numeric string, as some commands give in RESP2); anything else is a ProtocolException. */
    public static function integer(mixed $value): int
    {
        if (\is_int($value)) {
            return $value;
        }
        if (\is_string($value) && preg_match('/\A-?[0-9]+\z/', $value) === 1) {
            return (int) $value;
        }

        throw new ProtocolException('Expected an integer reply, got ' . get_debug_type($value));
    }

    public static function text(mixed $value): string
    {
        return \is_string($value) || \is_int($value) || \is_float($value) || $value instanceof \Stringable ? (string) $value : '';
    }
}
