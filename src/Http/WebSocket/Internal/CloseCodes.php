<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket\Internal;

/**
 * Which close codes may travel in a close frame (RFC 6455 §7.4, and the IANA registry for 1012-1014).
 *
 * 1004 is reserved, 1005 and 1006 only ever stand for "no code" and "no close frame" in an API, 1015 for a
 * failed TLS handshake; 0-999 and 1016-2999 are unassigned or for future RFCs; 3000-3999 are registered
 * with IANA by libraries and 4000-4999 are private use, both allowed.
 *
 * @internal
 */
final class CloseCodes
{
    public static function maySend(int $code): bool
    {
        return ($code >= 1000 && $code <= 1003) || ($code >= 1007 && $code <= 1014) || ($code >= 3000 && $code <= 4999);
    }
}
