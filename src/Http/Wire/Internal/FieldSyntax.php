<?php

declare(strict_types=1);

namespace Kiln\Http\Wire\Internal;

use Kiln\Http\Limits;
use Kiln\Http\Wire\ParseException;

/**
 * Field-level grammar shared by the request parser, the chunked decoder (trailers) and the encoder:
 * tokens, field lines, Host, Content-Length, Transfer-Encoding, comma lists (RFC 9110 §5, RFC 9112 §5-7).
 *
 * @internal
 */
final class FieldSyntax
{
    /** tchar (RFC 9110 §5.6.2) as a PCRE class. */
    public const TCHAR = '[!#$%&\'*+\-.^_`|~0-9A-Za-z]';

    /** A forbidden byte (CTL other than HTAB, or DEL), a CR not followed by LF, or an LF not preceded by CR. */
    public const BAD_BYTE = '/[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]|\r(?!\n)|(?<!\r)\n/';

    /** A field section (lines joined by CRLF, no final CRLF) where every line is token ":" field-value. */
    public const FIELD_LINES = '/\A' . self::TCHAR . '++:[\t\x20-\x7E\x80-\xFF]*+(?:\r\n' . self::TCHAR . '++:[\t\x20-\x7E\x80-\xFF]*+)*+\z/';

    /** A request head: a printable-ASCII request line, then field lines as in FIELD_LINES. */
    public const HEAD_LINES = '/\A[\x20-\x7E]++(?:\r\n' . self::TCHAR . '++:[\t\x20-\x7E\x80-\xFF]*+)*+\z/';

    private const TOKEN = '/\A' . self::TCHAR . '++\z/';

    /**
     * Response header names set on nearly every response, spelled as usually written: known tokens, so
     * assertResponseField() skips the regex for them (a lookup costs a tenth of a preg_match call).
     */
    private const COMMON_NAMES = [
        'Content-Type' => true, 'Cache-Control' => true, 'Location' => true, 'Set-Cookie' => true, 'ETag' => true,
        'Vary' => true, 'Allow' => true, 'Last-Modified' => true, 'Content-Encoding' => true, 'Retry-After' => true,
        'Content-Disposition' => true, 'WWW-Authenticate' => true, 'X-Request-Id' => true,
    ];

    /** reg-name restricted to unreserved characters (DNS names and IPv4 literals). */
    private const HOST_CHARS = 'abcdefghijklmnopqrstuvwxyz.-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_~'; // likeliest first: strspn is O(n·m)

    private const DIGITS = '0123456789';

    public static function isToken(string $value): bool
    {
        return \preg_match(self::TOKEN, $value) === 1;
    }

    /**
     * Parses field lines ("name: OWS value OWS") into lower-cased names => values in arrival order.
     * The block was already checked for forbidden bytes and bare CR/LF; $wellFormed says the lines also
     * matched FIELD_LINES (every line is token ":" value), which leaves only the limits to check.
     *
     * @param list<string> $lines
     * @return array<string, list<string>>
     * @throws ParseException
     */
    public static function parseFields(array $lines, int $from, Limits $limits, bool $wellFormed): array
    {
        $n = \count($lines);
        if ($n - $from > $limits->headerCount) {
            throw new ParseException(431, "More than {$limits->headerCount} header fields");
        }
        $max = $limits->headerLine;
        $fields = [];
        for ($i = $from; $i < $n; $i++) {
            $line = $lines[$i];
            if (\strlen($line) > $max) {
                throw new ParseException(431, "Header field line longer than $max bytes");
            }
            $colon = \strpos($line, ':');
            if (!$wellFormed) {
                self::checkFieldLine($line, $colon);
            }
            $fields[\strtolower(\substr($line, 0, (int) $colon))][] = \trim(\substr($line, (int) $colon + 1), " \t");
        }
        return $fields;
    }

    /** @throws ParseException */
    private static function checkFieldLine(string $line, int|false $colon): void
    {
        if ($line !== '' && ($line[0] === ' ' || $line[0] === "\t")) {
            throw new ParseException(400, 'Obsolete line folding (obs-fold) is not accepted');
        }
        if ($colon === false || $colon === 0) {
            throw new ParseException(400, 'Malformed header field line');
        }
        if (!self::isToken(\substr($line, 0, $colon))) {
            throw new ParseException(400, 'Invalid header field name (token characters only, no whitespace before the colon)');
        }
    }

    /**
     * Validates a Host value (uri-host [":" port]) and returns the host lower-cased without the port,
     * IPv6 literals keeping their brackets. Null when invalid.
     */
    public static function host(string $value): ?string
    {
        if (\preg_match('/\A([a-z0-9.\-]++)(?::[0-9]{1,5})?+\z/', $value, $m) === 1) {
            return $m[1]; // the common case: already lower-case
        }
        if ($value === '') {
            return null;
        }
        if ($value[0] === '[') {
            $close = strpos($value, ']');
            if ($close === false || filter_var(substr($value, 1, $close - 1), \FILTER_VALIDATE_IP, \FILTER_FLAG_IPV6) === false) {
                return null;
            }
            $host = strtolower(substr($value, 0, $close + 1));
            $port = substr($value, $close + 1);
        } else {
            $colon = strpos($value, ':');
            $host = $colon === false ? $value : substr($value, 0, $colon);
            $port = $colon === false ? '' : substr($value, $colon);
            if ($host === '' || \strspn($host, self::HOST_CHARS) !== \strlen($host)) {
                return null;
            }
            $host = strtolower($host);
        }
        if ($port !== '' && ($port[0] !== ':' || \strlen($port) > 6 || strspn($port, self::DIGITS, 1) !== \strlen($port) - 1)) {
            return null;
        }
        return $host;
    }

    /** Content-Length = 1*DIGIT, fitting in a PHP int. @throws ParseException */
    public static function contentLength(string $value): int
    {
        $n = \strlen($value);
        if ($n === 0 || $n > 19 || strspn($value, self::DIGITS) !== $n || ($n === 19 && strcmp($value, (string) \PHP_INT_MAX) > 0)) {
            throw new ParseException(400, 'Invalid Content-Length');
        }
        return (int) $value;
    }

    /**
     * Accepts exactly "chunked" (any case, once, last). Anything not ending in chunked, or chunked twice: 400
     * (the length cannot be determined); another coding before chunked (gzip, chunked): 501.
     *
     * @param list<string> $values
     * @throws ParseException
     */
    public static function checkTransferEncoding(array $values): void
    {
        $codings = explode(',', strtolower(implode(',', $values)));
        foreach ($codings as $i => $coding) {
            $codings[$i] = $coding = trim($coding, " \t");
            if (!self::isToken($coding)) {
                throw new ParseException(400, 'Malformed Transfer-Encoding');
            }
        }
        if (array_pop($codings) !== 'chunked') {
            throw new ParseException(400, 'Transfer-Encoding must end in chunked');
        }
        if (\in_array('chunked', $codings, true)) {
            throw new ParseException(400, 'Transfer-Encoding applies chunked more than once');
        }
        if ($codings !== []) {
            throw new ParseException(501, 'Unsupported transfer coding: ' . $codings[0]);
        }
    }

    /**
     * Whether a comma-separated list field (Connection, Expect) contains $token, case-insensitively.
     *
     * @param list<string> $values
     */
    public static function listContains(array $values, string $token): bool
    {
        foreach ($values as $value) {
            foreach (explode(',', $value) as $item) {
                if (strcasecmp(trim($item, " \t"), $token) === 0) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Throws \ValueError unless $name is a token and $value has no CR, LF or NUL (response side). */
    public static function assertResponseField(string $name, string $value): void
    {
        if (!isset(self::COMMON_NAMES[$name]) && \preg_match(self::TOKEN, $name) !== 1) {
            throw new \ValueError("Invalid header name '" . addcslashes($name, "\0..\37\177") . "': use token characters only");
        }
        // Three memchr() scans: cheaper than strcspn(), which compares each byte with each listed character.
        if (\str_contains($value, "\r") || \str_contains($value, "\n") || \str_contains($value, "\0")) {
            throw new \ValueError("Header '$name' has a value containing CR, LF or NUL (header injection refused)");
        }
    }
}
