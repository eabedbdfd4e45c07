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
 * forRequest() is the same page in the form the request's `Accept` asks for (HTML for a browser, JSON,
 * else this text), drawn by ErrorPage as App's ErrorHandler draws an application's: what a document root
 * answers for a refusal or a backend that failed. An application's own pages (custom per status, debug
 * traces) are App's ErrorHandler; a script's answer is the script's.
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
     * The error page for $request: ErrorPage in the format its `Accept` header picks (ErrorPageFormat).
     *
     * @param array<string, string> $headers added to Content-Type (Retry-After, Allow, Location …)
     * @throws \ValueError for a status outside 400-599, or a header with CR, LF or NUL
     */
    public static function forRequest(Request $request, int $status, string $detail = '', array $headers = []): Response
    {
        if ($status < 400 || $status > 599) {
            throw new \ValueError("an error response has a 4xx or 5xx status, not $status");
        }
        $format = ErrorPageFormat::fromAccept(implode(', ', $request->headerValues('accept')));
        if ($format === ErrorPageFormat::Text) {
            return self::plain($status, $detail, $headers);
        }
        $response = ErrorPage::render($format, $status, $detail === '' ? ResponseEncoder::reason($status) : $detail);
        foreach ($headers as $name => $value) {
            $response->setHeader($name, $value);
        }
        return $response;
    }

    /**
     * plain() as whole bytes, with `Connection: close`, for writing straight to a socket where no Response
     * can be made then. The bytes carry no Date (the moment they are sent is not known when they are made):
     * the sender adds it with ResponseEncoder::dated(). Only 5xx, for which RFC 9110 §6.6.1 allows a response
     * without one, should a sender ever write them as they are.
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
