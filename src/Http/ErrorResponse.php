<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Http\Wire\ResponseEncoder;

/**
 * The one builder of the error responses Kiln makes itself (a refused request, a handler that threw, a
 * backend that is down, a file that is not there): a short plain-text page, `404 Not Found\n` or
 * `404 Not Found: detail\n`. Its bytes come from ResponseEncoder like any other response's, so the framing
 * is the encoder's; bytes that must exist before there is a request to answer (the connection cap's 503, a
 * dying worker's 500) are made once, at start-up, by encoded().
 *
 * An application's own error pages (by `Accept`, custom per status) are App's ErrorHandler; a script's
 * answer is the script's.
 */
final class ErrorResponse
{
    private const CONTENT_TYPE = 'text/plain; charset=utf-8';

    /**
     * @param array<string, string> $headers added to Content-Type (Retry-After, Allow, Location …)
     * @throws \ValueError for a status outside 400-599, or a header with CR, LF or NUL
     */
    public static function plain(int $status, string $detail = '', array $headers = []): Response
    {
        if ($status < 400 || $status > 599) {
            throw new \ValueError("an error response has a 4xx or 5xx status, not $status");
        }
        $line = $status . ' ' . ResponseEncoder::reason($status);
        $body = ($detail === '' ? $line : "$line: $detail") . "\n";

        return new Response($status, ['Content-Type' => self::CONTENT_TYPE, ...$headers], $body);
    }

    /**
     * plain() as whole bytes, with `Connection: close`, for writing straight to a socket where no Response
     * can be made then. Only 5xx: the bytes carry no Date (the moment they are sent is not known when they
     * are made), which RFC 9110 §6.6.1 allows for 5xx alone.
     *
     * @param array<string, string> $headers
     * @throws \ValueError for a status outside 500-599
     */
    public static function encoded(ResponseEncoder $encoder, int $status, array $headers = []): string
    {
        if ($status < 500 || $status > 599) {
            throw new \ValueError("only a 5xx response may be sent without a Date, not $status");
        }

        return $encoder->undated(self::plain($status, '', $headers));
    }
}
