<?php

declare(strict_types=1);

namespace Kiln\Store\Session;

use Kiln\Store\StoreException;

/**
 * PHP's `php` session serializer (session.serialize_handler=php, the default), the format php-redis and
 * PHP's files handler store: `name|<serialize()d value>` repeated, with nothing between. split() cuts such
 * a string into name => the value's serialized bytes without unserializing them, so a session can be
 * merged key by key and a value nobody changed (an object of a class only a classic script knows) is
 * written back byte for byte. Sans-I/O: a string in, parts out.
 */
final class SessionCodec
{
    /**
     * @return array<string, string> name => serialized value
     * @throws StoreException when the data is not in this format
     */
    public static function split(string $data): array
    {
        $parts = [];
        $length = \strlen($data);
        for ($at = 0; $at < $length;) {
            $bar = strpos($data, '|', $at);
            if ($bar === false) {
                throw new StoreException('Session data is not in the php serializer format: a name without "|"');
            }
            $name = substr($data, $at, $bar - $at);
            $end = self::valueEnd($data, $bar + 1, 0);
            $parts[$name] = substr($data, $bar + 1, $end - $bar - 1);
            $at = $end;
        }
        return $parts;
    }

    /** @param array<string, string> $parts name => serialized value */
    public static function join(array $parts): string
    {
        $data = '';
        foreach ($parts as $name => $serialized) {
            $data .= self::name((string) $name) . '|' . $serialized;
        }
        return $data;
    }

    /** @param array<string, mixed> $values */
    public static function encode(array $values): string
    {
        return self::join(array_map(serialize(...), $values));
    }

    /**
     * @return array<string, mixed>
     * @throws StoreException
     */
    public static function decode(string $data): array
    {
        return array_map(self::value(...), self::split($data));
    }

    public static function value(string $serialized): mixed
    {
        $value = @unserialize($serialized);
        return $value !== false || $serialized === 'b:0;' ? $value : throw new StoreException('A session value does not unserialize');
    }

    /** @throws \ValueError for a key the format cannot hold (empty, numeric, or with a "|") */
    public static function name(string $name): string
    {
        if ($name === '' || str_contains($name, '|') || is_numeric($name)) {
            throw new \ValueError("A session key cannot be empty, numeric or contain '|' (PHP's session format cannot hold '$name')");
        }
        return $name;
    }

    /** Where the serialized value starting at $at ends (the offset after it). */
    private static function valueEnd(string $data, int $at, int $depth): int
    {
        if ($depth > 256) {
            throw new StoreException('Session data nests too deep');
        }
        $type = $data[$at] ?? '';
        switch ($type) {
            case 'N':
                return self::expect($data, $at + 1, ';');
            case 'b': case 'i': case 'd': case 'r': case 'R':
                return self::through($data, $at, ';');
            case 's': case 'E':
                [$bytes, $quote] = self::length($data, $at);
                return self::expect($data, self::expect($data, $quote + $bytes, '"'), ';');
            case 'a':
                [$count, $brace] = self::count($data, self::expect($data, $at + 1, ':'));
                return self::elements($data, $brace, 2 * $count, $depth);
            case 'O': case 'C':
                [$bytes, $quote] = self::length($data, $at);
                $after = self::expect($data, self::expect($data, $quote + $bytes, '"'), ':');
                [$count, $brace] = self::count($data, $after);
                if ($type === 'C') { // custom serialization: $count bytes of its own between the braces
                    return self::expect($data, $brace + $count, '}');
                }
                return self::elements($data, $brace, 2 * $count, $depth);
            default:
                throw new StoreException("Session data is not in the php serializer format (at byte $at)");
        }
    }

    /**
     * $type:<n>:" → [n, offset of the first byte after the quote].
     *
     * @return array{int, int}
     */
    private static function length(string $data, int $at): array
    {
        [$bytes, $after] = self::number($data, self::expect($data, $at + 1, ':'));
        return [$bytes, self::expect($data, self::expect($data, $after, ':'), '"')];
    }

    /**
     * <n>:{ → [n, offset after the brace].
     *
     * @return array{int, int}
     */
    private static function count(string $data, int $at): array
    {
        [$count, $after] = self::number($data, $at);
        return [$count, self::expect($data, self::expect($data, $after, ':'), '{')];
    }

    private static function elements(string $data, int $at, int $count, int $depth): int
    {
        for ($i = 0; $i < $count; $i++) {
            $at = self::valueEnd($data, $at, $depth + 1);
        }
        return self::expect($data, $at, '}');
    }

    /** @return array{int, int} the number at $at, the offset after it */
    private static function number(string $data, int $at): array
    {
        $digits = strspn($data, '0123456789', $at);
        if ($digits === 0 || $digits > 10) {
            throw new StoreException("Session data is not in the php serializer format (a length at byte $at)");
        }
        return [(int) substr($data, $at, $digits), $at + $digits];
    }

    private static function expect(string $data, int $at, string $char): int
    {
        if (($data[$at] ?? '') !== $char) {
            throw new StoreException("Session data is not in the php serializer format ('$char' expected at byte $at)");
        }
        return $at + 1;
    }

    private static function through(string $data, int $at, string $char): int
    {
        $end = strpos($data, $char, $at);
        return $end === false ? throw new StoreException('Session data ends inside a value') : $end + 1;
    }
}
