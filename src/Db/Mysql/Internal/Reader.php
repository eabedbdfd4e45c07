<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Internal;

use Kiln\Db\Mysql\MysqlProtocolException;

/**
 * Reads the integer and string encodings of the MySQL protocol from one packet's payload, left to right.
 * Reading past the end throws MysqlProtocolException (a packet shorter than its fields say).
 *
 * @internal
 */
final class Reader
{
    private int $offset = 0;

    public function __construct(private readonly string $data) {}

    public function int1(): int
    {
        return \ord($this->bytes(1));
    }

    public function int2(): int
    {
        return self::int('v', $this->bytes(2));
    }

    public function int3(): int
    {
        $b = $this->bytes(3);

        return \ord($b[0]) | (\ord($b[1]) << 8) | (\ord($b[2]) << 16);
    }

    public function int4(): int
    {
        return self::int('V', $this->bytes(4));
    }

    /** A signed 64-bit integer (PHP's int). */
    public function int8(): int
    {
        return self::int('q', $this->bytes(8));
    }

    /** An unsigned 64-bit integer: an int when it fits, else its decimal string. */
    public function uint8(): int|string
    {
        $value = $this->int8();

        return $value >= 0 ? $value : sprintf('%u', $value);
    }

    /** A length-encoded integer; null for 0xFB (NULL in a text row). */
    public function lenenc(): ?int
    {
        $first = $this->int1();

        return match (true) {
            $first < 0xFB => $first,
            $first === 0xFB => null,
            $first === 0xFC => $this->int2(),
            $first === 0xFD => $this->int3(),
            $first === 0xFE => $this->int8(),
            default => throw new MysqlProtocolException('0xFF is no length-encoded integer'),
        };
    }

    public function lenencString(): ?string
    {
        $length = $this->lenenc();

        return $length === null ? null : $this->bytes($length);
    }

    public function nulString(): string
    {
        $end = strpos($this->data, "\0", $this->offset);
        if ($end === false) {
            throw new MysqlProtocolException('A NUL-terminated string has no NUL');
        }
        $value = substr($this->data, $this->offset, $end - $this->offset);
        $this->offset = $end + 1;

        return $value;
    }

    public function rest(): string
    {
        $value = substr($this->data, $this->offset);
        $this->offset = \strlen($this->data);

        return $value;
    }

    public function bytes(int $length): string
    {
        if ($length < 0 || $this->offset + $length > \strlen($this->data)) {
            throw new MysqlProtocolException("A packet ends before its fields do (wanted $length bytes at offset {$this->offset} of " . \strlen($this->data) . ')');
        }
        $value = substr($this->data, $this->offset, $length);
        $this->offset += $length;

        return $value;
    }

    public function skip(int $length): void
    {
        $this->bytes($length);
    }

    /** The one integer $format (an unpack() code) reads from $bytes. */
    public static function int(string $format, string $bytes): int
    {
        $value = unpack($format, $bytes);

        return \is_array($value) && \is_int($value[1] ?? null) ? $value[1] : throw new MysqlProtocolException("Cannot read '$format' from " . \strlen($bytes) . ' bytes');
    }

    /** The one float $format (g: float, e: double, little-endian) reads from $bytes. */
    public static function float(string $format, string $bytes): float
    {
        $value = unpack($format, $bytes);

        return \is_array($value) && \is_float($value[1] ?? null) ? $value[1] : throw new MysqlProtocolException("Cannot read '$format' from " . \strlen($bytes) . ' bytes');
    }

    public function atEnd(): bool
    {
        return $this->offset >= \strlen($this->data);
    }
}
