<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Internal;

/**
 * Encodings for what the client writes: length-encoded integers and strings, and packet framing
 * (payloads of 16 MiB - 1 bytes and more are split, each part with the next sequence id).
 *
 * @internal
 */
final class Wire
{
    public const MAX_PAYLOAD = 0xFFFFFF;

    private function __construct() {}

    public static function lenenc(int $value): string
    {
        return match (true) {
            $value < 0xFB => \chr($value),
            $value <= 0xFFFF => "\xFC" . pack('v', $value),
            $value <= 0xFFFFFF => "\xFD" . substr(pack('V', $value), 0, 3),
            default => "\xFE" . pack('P', $value),
        };
    }

    public static function lenencString(string $value): string
    {
        return self::lenenc(\strlen($value)) . $value;
    }

    /**
     * $payload framed as packets from sequence id $sequence on; returns the bytes and the next sequence id.
     *
     * @return array{string, int}
     */
    public static function packets(string $payload, int $sequence): array
    {
        $out = '';
        $offset = 0;
        do {
            $part = substr($payload, $offset, self::MAX_PAYLOAD);
            $offset += self::MAX_PAYLOAD;
            $out .= substr(pack('V', \strlen($part)), 0, 3) . \chr($sequence) . $part;
            $sequence = ($sequence + 1) & 0xFF;
        } while (\strlen($part) === self::MAX_PAYLOAD);

        return [$out, $sequence];
    }
}
