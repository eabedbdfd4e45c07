<?php

declare(strict_types=1);

namespace Kiln\Db\Postgres;

use Kiln\Db\Binary;

/**
 * PostgreSQL values to PHP and back. Columns by type OID: bool → bool; int2, int4, int8, oid → int;
 * float4, float8 → float (NaN and ±Infinity included); bytea → string of bytes; everything else
 * (numeric, text, dates, json, arrays) → string as the server wrote it; NULL → null.
 * Parameters: null, bool, int, float, string (text), Binary (bytea), \DateTimeInterface (with its offset).
 */
final class PgTypes
{
    public const BOOL = 16;
    public const BYTEA = 17;
    public const INT8 = 20;
    public const INT2 = 21;
    public const INT4 = 23;
    public const OID = 26;
    public const FLOAT4 = 700;
    public const FLOAT8 = 701;

    private function __construct() {}

    public static function decode(int $oid, ?string $text): mixed
    {
        if ($text === null) {
            return null;
        }

        return match ($oid) {
            self::BOOL => $text === 't',
            self::INT2, self::INT4, self::INT8, self::OID => (int) $text,
            self::FLOAT4, self::FLOAT8 => self::float($text),
            self::BYTEA => self::bytea($text),
            default => $text,
        };
    }

    public static function encode(mixed $value): ?string
    {
        return match (true) {
            $value === null => null,
            \is_bool($value) => $value ? 't' : 'f',
            \is_int($value) => (string) $value,
            \is_float($value) => self::floatText($value),
            \is_string($value) => $value,
            $value instanceof Binary => '\x' . bin2hex($value->bytes),
            $value instanceof \DateTimeInterface => $value->format('Y-m-d H:i:s.uP'),
            $value instanceof \Stringable => (string) $value,
            default => throw new \TypeError('A query parameter must be null, bool, int, float, string, Binary or DateTimeInterface, got ' . get_debug_type($value)),
        };
    }

    private static function float(string $text): float
    {
        return match ($text) {
            'NaN' => NAN,
            'Infinity' => INF,
            '-Infinity' => -INF,
            default => (float) $text,
        };
    }

    private static function floatText(float $value): string
    {
        return match (true) {
            is_nan($value) => 'NaN',
            is_infinite($value) => $value > 0 ? 'Infinity' : '-Infinity',
            default => var_export($value, true),
        };
    }

    private static function bytea(string $text): string
    {
        if (str_starts_with($text, '\x')) {
            return (string) hex2bin(substr($text, 2));
        }

        return pg_unescape_bytea($text); // the old "escape" output format
    }
}
