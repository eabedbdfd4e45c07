<?php

declare(strict_types=1);

namespace Kiln\Redis;

/**
 * The hash slot of a key in a Redis Cluster: CRC16 (XMODEM) of the key, or of its hash tag (the part
 * between the first `{` and the next `}`, when not empty), modulo 16384.
 */
final class ClusterSlot
{
    public const COUNT = 16384;

    /** @var list<int>|null */
    private static ?array $table = null;

    private function __construct() {}

    public static function of(string $key): int
    {
        $open = strpos($key, '{');
        if ($open !== false) {
            $close = strpos($key, '}', $open + 1);
            if ($close !== false && $close > $open + 1) {
                $key = substr($key, $open + 1, $close - $open - 1);
            }
        }

        return self::crc16($key) & (self::COUNT - 1);
    }

    public static function crc16(string $bytes): int
    {
        $table = self::$table ??= self::table();
        $crc = 0;
        $length = \strlen($bytes);
        for ($i = 0; $i < $length; $i++) {
            $crc = (($crc << 8) & 0xFFFF) ^ $table[(($crc >> 8) ^ \ord($bytes[$i])) & 0xFF];
        }

        return $crc;
    }

    /** @return list<int> */
    private static function table(): array
    {
        $table = [];
        for ($byte = 0; $byte < 256; $byte++) {
            $crc = $byte << 8;
            for ($bit = 0; $bit < 8; $bit++) {
                $crc = ($crc & 0x8000) !== 0 ? (($crc << 1) ^ 0x1021) & 0xFFFF : ($crc << 1) & 0xFFFF;
            }
            $table[] = $crc;
        }

        return $table;
    }
}
