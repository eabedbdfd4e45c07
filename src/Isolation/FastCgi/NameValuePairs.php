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

    /** Byte N at offset N, N < 128: a one-byte length is read from here, without a call to chr(). */
    private const BYTES = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0A\x0B\x0C\x0D\x0E\x0F"
        . "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1A\x1B\x1C\x1D\x1E\x1F"
        . "\x20\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2A\x2B\x2C\x2D\x2E\x2F"
        . "\x30\x31\x32\x33\x34\x35\x36\x37\x38\x39\x3A\x3B\x3C\x3D\x3E\x3F"
        . "\x40\x41\x42\x43\x44\x45\x46\x47\x48\x49\x4A\x4B\x4C\x4D\x4E\x4F"
        . "\x50\x51\x52\x53\x54\x55\x56\x57\x58\x59\x5A\x5B\x5C\x5D\x5E\x5F"
        . "\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6A\x6B\x6C\x6D\x6E\x6F"
        . "\x70\x71\x72\x73\x74\x75\x76\x77\x78\x79\x7A\x7B\x7C\x7D\x7E\x7F";

    private function __construct() {}

    /** @param array<string, string> $pairs */
    public static function encode(array $pairs): string
    {
        $out = '';
        $bytes = self::BYTES;
        foreach ($pairs as $name => $value) {
            // Runs for every param of every request: one test for the common case (both lengths one byte,
            // a name), then one append of the pair built in one piece (an interpolated string is allocated
            // once; `a . b . c . d` made a string per dot, which cost a third of the encoding).
            // An int key's strlen() is that of its decimal form.
            $n = \strlen((string) $name);
            $v = \strlen($value);
            if (($n | $v) < 128 && $n !== 0) {
                $out .= "{$bytes[$n]}{$bytes[$v]}{$name}{$value}";
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
