<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

use Kiln\Store\BusException;

/**
 * The body of one bus frame, sans-I/O: a 2-byte big-endian channel length, the channel, then the payload
 * (the rest of the body). Frames themselves are Kiln\Server\RelayFrames, whose bound on a body leaves room for
 * the largest payload with the longest channel.
 *
 * @internal
 */
final class BusMessage
{
    public const MAX_CHANNEL = 65535;

    /** The bound on a payload (16 MiB); the channel and its length come on top. */
    public const MAX_PAYLOAD = 16 << 20;

    /** @throws BusException for a channel longer than MAX_CHANNEL bytes or a payload longer than MAX_PAYLOAD */
    public static function encode(string $channel, string $payload): string
    {
        $length = \strlen($channel);
        if ($length > self::MAX_CHANNEL) {
            throw new BusException("A bus channel name is at most " . self::MAX_CHANNEL . " bytes, got $length: the message was not published");
        }
        if (\strlen($payload) > self::MAX_PAYLOAD) {
            throw new BusException(\sprintf("A message to '%s' of %d bytes is over the bound of %d (16 MiB): it was not published", $channel, \strlen($payload), self::MAX_PAYLOAD));
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
