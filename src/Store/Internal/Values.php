<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

/**
 * What a Store accepts: scalars and arrays of scalars, nulls and such arrays, up to a size.
 *
 * @internal
 */
final class Values
{
    /** @throws \ValueError naming what cannot be stored */
    public static function check(mixed $value, int $maxBytes): void
    {
        if (\is_int($value) || \is_float($value) || \is_bool($value)) {
            return;
        }
        if (\is_string($value)) {
            if (\strlen($value) > $maxBytes) {
                throw new \ValueError(\sprintf('A value of %d bytes is too large for this store (%d at most)', \strlen($value), $maxBytes));
            }
            return;
        }
        if ($value === null) {
            throw new \ValueError('null cannot be stored: delete() the key instead');
        }
        if (!\is_array($value)) {
            throw new \ValueError(\sprintf('A %s cannot be stored: store scalars and arrays of them (serialize objects yourself)', get_debug_type($value)));
        }
        self::checkArray($value, 0);
        $size = \strlen(serialize($value));
        if ($size > $maxBytes) {
            throw new \ValueError(\sprintf('A value of %d serialized bytes is too large for this store (%d at most)', $size, $maxBytes));
        }
    }

    /** @param array<mixed> $array */
    private static function checkArray(array $array, int $depth): void
    {
        if ($depth > 64) {
            throw new \ValueError('A value nested deeper than 64 arrays cannot be stored');
        }
        foreach ($array as $item) {
            if (\is_array($item)) {
                self::checkArray($item, $depth + 1);
            } elseif ($item !== null && !\is_scalar($item)) {
                throw new \ValueError(\sprintf('A %s inside an array cannot be stored: store scalars and arrays of them', get_debug_type($item)));
            }
        }
    }

    public static function ttl(int $ttl): void
    {
        if ($ttl < 0) {
            throw new \ValueError("TTL must be ≥ 0 seconds (0: never expires), got $ttl");
        }
    }
}
