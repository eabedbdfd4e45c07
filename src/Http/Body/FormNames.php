<?php

declare(strict_types=1);

namespace Kiln\Http\Body;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\UploadedFile;

/**
 * Field names with brackets (`a[b][]`) turned into nested arrays the way PHP builds $_POST and $_FILES.
 * Values go through parse_str() itself; files, which parse_str() cannot hold, through keys(), which
 * follows the same rules (spaces and dots in the base name become "_", `[]` appends, text after a
 * closing bracket that opens no new one is ignored, an unclosed first bracket becomes "_").
 *
 * @internal
 */
final class FormNames
{
    /**
     * @param list<array{string, string}> $pairs name => value, in order
     * @return array<array-key, mixed>
     * @throws BadRequestBodyException
     */
    public static function fields(array $pairs, BodyLimits $limits): array
    {
        $query = [];
        foreach ($pairs as [$name, $value]) {
            self::checkDepth($name, $limits);
            $query[] = rawurlencode($name) . '=' . rawurlencode($value);
        }
        parse_str(implode('&', $query), $fields);
        return $fields;
    }

    /**
     * @param list<array{string, UploadedFile}> $files
     * @return array<array-key, mixed>
     * @throws BadRequestBodyException
     */
    public static function files(array $files, BodyLimits $limits): array
    {
        $tree = [];
        foreach ($files as [$name, $file]) {
            self::checkDepth($name, $limits);
            self::insert($tree, $name, $file);
        }
        return $tree;
    }

    /**
     * Adds one value under a field name, as PHP adds the next variable of a form (a name PHP drops adds nothing).
     *
     * @param array<array-key, mixed> $tree
     */
    public static function insert(array &$tree, string $name, mixed $value): void
    {
        $keys = self::keys($name);
        if ($keys !== null) {
            self::place($tree, $keys, $value);
        }
    }

    /** @throws BadRequestBodyException */
    public static function checkDepth(string $name, BodyLimits $limits): void
    {
        if (substr_count($name, '[') > $limits->depth) {
            throw new BadRequestBodyException("Field name nested deeper than {$limits->depth} levels");
        }
    }

    /**
     * The path of a name: base, then each bracketed key (null for `[]`); null for a name PHP drops.
     *
     * @return non-empty-list<string|null>|null
     */
    public static function keys(string $name): ?array
    {
        $name = ltrim($name, ' ');
        $open = strpos($name, '[');
        $close = $open === false ? false : strpos($name, ']', $open);
        if ($open === false || $close === false) {
            if ($open !== false) {
                $name[$open] = '_';
            }
            return $name === '' ? null : [strtr($name, ' .', '__')];
        }
        $base = substr($name, 0, $open);
        if ($base === '') {
            return null;
        }
        $keys = [strtr($base, ' .', '__')];
        $rest = substr($name, $open);
        while ($rest !== '' && $rest[0] === '[') {
            $close = strpos($rest, ']');
            if ($close === false) {
                break;
            }
            $key = substr($rest, 1, $close - 1);
            $keys[] = ltrim($key, " \t\r\n") === '' ? null : $key; // "[ ]" appends, as in PHP
            $rest = substr($rest, $close + 1);
        }
        return $keys;
    }

    /**
     * @param array<array-key, mixed> $tree
     * @param non-empty-list<string|null> $keys
     */
    private static function place(array &$tree, array $keys, mixed $value): void
    {
        $node = &$tree;
        $last = \count($keys) - 1;
        foreach ($keys as $i => $key) {
            if (!\is_array($node)) {
                $node = [];
            }
            if ($key === null) {
                $node[] = $i === $last ? $value : [];
                $key = array_key_last($node);
            } elseif ($i === $last) {
                $node[$key] = $value;
            } else {
                $node[$key] ??= [];
            }
            $node = &$node[$key];
        }
    }
}
