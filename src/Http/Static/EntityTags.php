<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/** Entity-tag lists and comparisons (RFC 9110 §8.8.3). Sans-I/O. */
final class EntityTags
{
    /**
     * The tags of If-Match / If-None-Match field values: ['*'] for a lone `*`; otherwise every
     * well-formed `"..."` or `W/"..."` member, in order. Malformed members can match nothing: dropped.
     *
     * @param list<string> $values the field's lines
     * @return list<string>
     */
    public static function parseList(array $values): array
    {
        $joined = trim(implode(',', $values), " \t");
        if ($joined === '*') {
            return ['*'];
        }
        preg_match_all('/\G[\s,]*((?:W\/)?"[\x21\x23-\x7E\x80-\xFF]*")|\G[\s,]*[^\s,]+/', $joined, $m);
        return array_values(array_filter($m[1], static fn(string $tag): bool => $tag !== ''));
    }

    /** Strong comparison: both strong, same opaque tag. */
    public static function strongEquals(string $a, string $b): bool
    {
        return $a === $b && !str_starts_with($a, 'W/');
    }

    /** Weak comparison: same opaque tag, either or both may be weak. */
    public static function weakEquals(string $a, string $b): bool
    {
        return self::opaque($a) === self::opaque($b);
    }

    public static function isWeak(string $tag): bool
    {
        return str_starts_with($tag, 'W/');
    }

    private static function opaque(string $tag): string
    {
        return str_starts_with($tag, 'W/') ? substr($tag, 2) : $tag;
    }
}
