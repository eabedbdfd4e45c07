<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket\Internal;

use Kiln\Http\WebSocket\Close;
use Kiln\Http\WebSocket\ProtocolViolation;

/**
 * The payload of a close frame (RFC 6455 §5.5.1, §7.4): a 2-byte code and a UTF-8 reason, or nothing.
 *
 * Codes that may travel: 1000-1003, 1007-1014 (1012-1014 from the IANA registry), 3000-3999 (registered
 * by libraries) and 4000-4999 (private use). 1004 is reserved; 1005 and 1006 only ever stand for "no code"
 * and "no close frame" in an API, 1015 for a failed TLS handshake; 0-999 and 1016-2999 are unassigned.
 *
 * @internal
 */
final class CloseFrame
{
    public const MAX_REASON = 123;

    public static function maySend(int $code): bool
    {
        return ($code >= 1000 && $code <= 1003) || ($code >= 1007 && $code <= 1014) || ($code >= 3000 && $code <= 4999);
    }

    public static function decode(string $payload): Close|ProtocolViolation
    {
        $size = \strlen($payload);
        if ($size === 0) {
            return new Close(Close::NO_STATUS, '');
        }
        if ($size === 1) {
            return new ProtocolViolation(ProtocolViolation::PROTOCOL_ERROR, 'close frame with a one-byte payload');
        }
        $code = (\ord($payload[0]) << 8) | \ord($payload[1]);
        if (!self::maySend($code)) {
            return new ProtocolViolation(ProtocolViolation::PROTOCOL_ERROR, "invalid close code $code");
        }
        $reason = substr($payload, 2);
        if (!Utf8::isValid($reason)) {
            return new ProtocolViolation(ProtocolViolation::INVALID_DATA, 'close reason is not valid UTF-8');
        }
        return new Close($code, $reason);
    }

    /** @throws \ValueError for a code one may not send, or a reason not UTF-8 or over 123 bytes */
    public static function encode(int $code, string $reason): string
    {
        if ($code === Close::NO_STATUS && $reason === '') {
            return '';
        }
        if (!self::maySend($code)) {
            throw new \ValueError("Close code $code may not be sent: use 1000-1003, 1007-1014 or 3000-4999");
        }
        if (\strlen($reason) > self::MAX_REASON || !Utf8::isValid($reason)) {
            throw new \ValueError('A close reason must be valid UTF-8 of at most 123 bytes');
        }
        return pack('n', $code) . $reason;
    }
}
