<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

use Kiln\Store\BusException;

/**
 * The body of one bus frame, sans-I/O: a 2-byte big-endian channel length, the channel, then the payload
 * (the rest of the body). Frames themselves are Kiln\Server\RelayFrames.
 *
 * @internal
 */
final class BusMessage
{
    public const MAX_CHANNEL = 65535;

    /** @throws BusException for a channel longer than MAX_CHANNEL bytes */
    public static function encode(string $channel, string $payload): string
    {
        $length = \strlen($channel);
        if ($length > self::MAX_CHANNEL) {
            throw new BusException("A bus channel name is at most " . self::MAX_CHANNEL . " bytes, got $length: the message was not published");
        }
        return pack('n', $length) . $channel . $payload;
    }

    /**
     * @return array{string, string} channel, payload
     * @throws BusException for a body too short for its channel length
     */
    public static function decode(string $body): array
    {
        if (\strlen($body) < 2) {
            throw new BusException('A bus message of ' . \strlen($body) . ' bytes is too short');
        }
        $length = (\ord($body[0]) << 8) | \ord($body[1]);
        if (\strlen($body) < 2 + $length) {
            throw new BusException("A bus message names a channel of $length bytes but holds " . (\strlen($body) - 2));
        }
        return [substr($body, 2, $length), (string) substr($body, 2 + $length)];
    }
}
