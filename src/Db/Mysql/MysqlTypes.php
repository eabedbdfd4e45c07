<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql;

use Kiln\Db\Binary;
use Kiln\Db\Mysql\Internal\Reader;
use Kiln\Db\Mysql\Internal\Wire;

/**
 * MySQL values to PHP and back. Columns: TINYINT … BIGINT, YEAR → int (a BIGINT UNSIGNED above PHP_INT_MAX
 * → its decimal string); FLOAT, DOUBLE → float; DECIMAL → string (exact); dates and times → string as
 * MySQL writes them; BIT, BLOB, BINARY → string of bytes; everything else → string; NULL → null. Text
 * result sets (query() without parameters) and binary ones (prepared statements) give the same values.
 * Parameters are sent typed: null, bool (TINYINT), int (BIGINT), float (DOUBLE), string, Binary (BLOB),
 * \DateTimeInterface (as 'Y-m-d H:i:s.u' in its own time zone).
 */
final class MysqlTypes
{
    public const DECIMAL = 0x00;
    public const TINY = 0x01;
    public const SHORT = 0x02;
    public const LONG = 0x03;
    public const FLOAT = 0x04;
    public const DOUBLE = 0x05;
    public const NULL = 0x06;
    public const TIMESTAMP = 0x07;
    public const LONGLONG = 0x08;
    public const INT24 = 0x09;
    public const DATE = 0x0A;
    public const TIME = 0x0B;
    public const DATETIME = 0x0C;
    public const YEAR = 0x0D;
    public const BLOB = 0xFC;
    public const VAR_STRING = 0xFD;
    /** The decimals of a FLOAT or DOUBLE declared without them (31 on MySQL and MariaDB 10.x, 39 on later MariaDB) */
    private const NOT_FIXED_DECIMALS = 31;

    private function __construct() {}

    public static function fromText(Column $column, ?string $text): mixed
    {
        if ($text === null) {
            return null;
        }

        return match ($column->type) {
            self::TINY, self::SHORT, self::LONG, self::INT24, self::YEAR => (int) $text,
            self::LONGLONG => $column->isUnsigned() && (\strlen($text) > 19 || (\strlen($text) === 19 && $text > (string) PHP_INT_MAX)) ? $text : (int) $text,
            self::FLOAT, self::DOUBLE => (float) $text,
            default => $text,
        };
    }

    /** One value of a binary row (COM_STMT_EXECUTE's answer). */
    public static function fromBinary(Column $column, Reader $in): mixed
    {
        $unsigned = $column->isUnsigned();

        return match ($column->type) {
            self::TINY => $unsigned ? $in->int1() : Reader::int('c', $in->bytes(1)),
            self::SHORT, self::YEAR => $unsigned || $column->type === self::YEAR ? $in->int2() : Reader::int('s', $in->bytes(2)),
            self::LONG, self::INT24 => $unsigned ? $in->int4() : Reader::int('l', $in->bytes(4)),
            self::LONGLONG => $unsigned ? $in->uint8() : $in->int8(),
            self::FLOAT => self::float4(Reader::float('g', $in->bytes(4)), $column->decimals),
            self::DOUBLE => Reader::float('e', $in->bytes(8)),
            self::DATE, self::DATETIME, self::TIMESTAMP => self::dateTime($column->type, $column->decimals, $in),
            self::TIME => self::time($column->decimals, $in),
            default => $in->lenencString(),
        };
    }

    /**
     * The type header (2 bytes) and value of one parameter; null values only set the NULL bitmap.
     *
     * @return array{string, string}
     */
    public static function param(mixed $value): array
    {
        return match (true) {
            $value === null => [\chr(self::NULL) . "\0", ''],
            \is_bool($value) => [\chr(self::TINY) . "\0", $value ? "\1" : "\0"],
            \is_int($value) => [\chr(self::LONGLONG) . "\0", pack('q', $value)],
            \is_float($value) => [\chr(self::DOUBLE) . "\0", pack('e', $value)],
            \is_string($value) => [\chr(self::VAR_STRING) . "\0", Wire::lenencString($value)],
            $value instanceof Binary => [\chr(self::BLOB) . "\0", Wire::lenencString($value->bytes)],
            $value instanceof \DateTimeInterface => [\chr(self::VAR_STRING) . "\0", Wire::lenencString($value->format('Y-m-d H:i:s.u'))],
            $value instanceof \Stringable => [\chr(self::VAR_STRING) . "\0", Wire::lenencString((string) $value)],
            default => throw new \TypeError('A query parameter must be null, bool, int, float, string, Binary or DateTimeInterface, got ' . get_debug_type($value)),
        };
    }

    /**
     * A FLOAT as the server writes it in a text result set: its declared decimals (FLOAT(7,3)), else 6
     * significant digits (FLT_DIG) — 123456789 is 123457000 there, as it is through mysqlnd.
     */
    private static function float4(float $value, int $decimals): float
    {
        return (float) ($decimals < self::NOT_FIXED_DECIMALS ? sprintf("%.{$decimals}F", $value) : sprintf('%.6g', $value));
    }

    private static function dateTime(int $type, int $decimals, Reader $in): string
    {
        $length = $in->int1();
        [$year, $month, $day, $hour, $minute, $second, $micro] = [0, 0, 0, 0, 0, 0, 0];
        if ($length >= 4) {
            [$year, $month, $day] = [$in->int2(), $in->int1(), $in->int1()];
        }
        if ($length >= 7) {
            [$hour, $minute, $second] = [$in->int1(), $in->int1(), $in->int1()];
        }
        if ($length >= 11) {
            $micro = $in->int4();
        }
        $date = sprintf('%04d-%02d-%02d', $year, $month, $day);
        if ($type === self::DATE) {
            return $date;
        }

        return $date . sprintf(' %02d:%02d:%02d', $hour, $minute, $second) . self::fraction($micro, $decimals);
    }

    private static function time(int $decimals, Reader $in): string
    {
        $length = $in->int1();
        [$negative, $days, $hour, $minute, $second, $micro] = [0, 0, 0, 0, 0, 0];
        if ($length >= 8) {
            [$negative, $days, $hour, $minute, $second] = [$in->int1(), $in->int4(), $in->int1(), $in->int1(), $in->int1()];
        }
        if ($length >= 12) {
            $micro = $in->int4();
        }

        return ($negative === 1 ? '-' : '') . sprintf('%02d:%02d:%02d', $days * 24 + $hour, $minute, $second) . self::fraction($micro, $decimals);
    }

    private static function fraction(int $micro, int $decimals): string
    {
        if ($decimals < 1 || $decimals > 6) {
            return '';
        }

        return '.' . substr(sprintf('%06d', $micro), 0, $decimals);
    }
}
