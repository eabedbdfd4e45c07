<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/**
 * The name-value pair encoding of PARAMS, GET_VALUES and GET_VALUES_RESULT (spec §3.4): each length is one
 * byte when below 128, else four bytes, big-endian, with the high bit set; then the name and the value.
 * A PARAMS stream is decoded once it has ended (its records concatenated), since a pair may straddle records.
 */
final class NameValuePairs
{
    public const MAX_LENGTH = 0x7FFFFFFF;

    private function __construct() {}

    /** @param array<string, string> $pairs */
    public static function encode(array $pairs): string
    {
        $out = '';
        foreach ($pairs as $name => $value) {
            // Runs for every param of every request: one test for the common case (both lengths one byte,
            // a name), then one concatenation. An int key's strlen() is that of its decimal form.
            $n = \strlen((string) $name);
            $v = \strlen($value);
            if (($n | $v) < 128 && $n !== 0) {
                $out .= \chr($n) . \chr($v) . $name . $value;
                continue;
            }
            if ($n === 0) {
                throw new \ValueError('A FastCGI name-value pair needs a non-empty name');
            }
            $out .= self::length($n) . self::length($v) . $name . $value;
        }

        return $out;
    }

    /**
     * A later pair with the same name replaces the earlier one.
     *
     * @return array<string, string>
     *
     * @throws ProtocolException for a truncated pair or an empty name
     */
    public static function decode(string $bytes): array
    {
        $pairs = [];
        $offset = 0;
        $end = \strlen($bytes);
        while ($offset < $end) {
            $nameLength = self::readLength($bytes, $offset);
            $valueLength = self::readLength($bytes, $offset);
            if ($nameLength === 0) {
                throw new ProtocolException('A FastCGI name-value pair has an empty name');
            }
            if ($nameLength + $valueLength > $end - $offset) {
                throw new ProtocolException("A FastCGI name-value pair claims {$nameLength} + {$valueLength} bytes but only " . ($end - $offset) . ' remain');
            }
            $name = \substr($bytes, $offset, $nameLength);
            $pairs[$name] = (string) \substr($bytes, $offset + $nameLength, $valueLength);
            $offset += $nameLength + $valueLength;
        }

        return $pairs;
    }

    private static function length(int $length): string
    {
        if ($length < 128) {
            return \chr($length);
        }
        if ($length > self::MAX_LENGTH) {
            throw new \ValueError('A FastCGI name or value is at most ' . self::MAX_LENGTH . ' bytes');
        }

        return \pack('N', $length | 0x80000000);
    }

    /** @throws ProtocolException */
    private static function readLength(string $bytes, int &$offset): int
    {
        if ($offset >= \strlen($bytes)) {
            throw new ProtocolException('A FastCGI name-value pair is truncated inside its lengths');
        }
        $first = \ord($bytes[$offset]);
        if ($first < 128) {
            $offset++;

            return $first;
        }
        if ($offset + 4 > \strlen($bytes)) {
            throw new ProtocolException('A FastCGI name-value pair is truncated inside a four-byte length');
        }
        /** @var array{1: int} $length */
        $length = \unpack('N', $bytes, $offset);
        $offset += 4;

        return $length[1] & 0x7FFFFFFF;
    }
}
