<?php

declare(strict_types=1);

namespace Kiln\Http\Wire;

use Kiln\Http\Response;
use Kiln\Http\Wire\Internal\FieldSyntax;

/**
 * Sans-I/O HTTP/1.1 response encoder: status line and headers, chunked framing.
 *
 * The encoder owns message framing and connection management: Content-Length, Transfer-Encoding and
 * Connection given by the application are dropped and derived from head()'s arguments instead (except
 * Connection on 101, which an upgrade needs). The status line always says HTTP/1.1 (RFC 9110 §6.2);
 * $version (the request's) decides chunked vs close-delimited and the Connection header.
 */
final class ResponseEncoder
{
    private const REASONS = [
        100 => 'Continue', 101 => 'Switching Protocols', 102 => 'Processing', 103 => 'Early Hints',
        200 => 'OK', 201 => 'Created', 202 => 'Accepted', 203 => 'Non-Authoritative Information',
        204 => 'No Content', 205 => 'Reset Content', 206 => 'Partial Content', 207 => 'Multi-Status',
        208 => 'Already Reported', 226 => 'IM Used',
        300 => 'Multiple Choices', 301 => 'Moved Permanently', 302 => 'Found', 303 => 'See Other',
        304 => 'Not Modified', 305 => 'Use Proxy', 307 => 'Temporary Redirect', 308 => 'Permanent Redirect',
        400 => 'Bad Request', 401 => 'Unauthorized', 402 => 'Payment Required', 403 => 'Forbidden',
        404 => 'Not Found', 405 => 'Method Not Allowed', 406 => 'Not Acceptable',
        407 => 'Proxy Authentication Required', 408 => 'Request Timeout', 409 => 'Conflict', 410 => 'Gone',
        411 => 'Length Required', 412 => 'Precondition Failed', 413 => 'Content Too Large',
        414 => 'URI Too Long', 415 => 'Unsupported Media Type', 416 => 'Range Not Satisfiable',
        417 => 'Expectation Failed', 418 => "I'm a teapot", 421 => 'Misdirected Request',
        422 => 'Unprocessable Content', 423 => 'Locked', 424 => 'Failed Dependency', 425 => 'Too Early',
        426 => 'Upgrade Required', 428 => 'Precondition Required', 429 => 'Too Many Requests',
        431 => 'Request Header Fields Too Large', 451 => 'Unavailable For Legal Reasons',
        500 => 'Internal Server Error', 501 => 'Not Implemented', 502 => 'Bad Gateway',
        503 => 'Service Unavailable', 504 => 'Gateway Timeout', 505 => 'HTTP Version Not Supported',
        506 => 'Variant Also Negotiates', 507 => 'Insufficient Storage', 508 => 'Loop Detected',
        510 => 'Not Extended', 511 => 'Network Authentication Required',
    ];

    /** Headers the encoder derives itself (lower-cased). */
    private const OWNED = ['content-length' => true, 'transfer-encoding' => true, 'connection' => true];

    /** Names, as usually written, that are none of OWNED, Date or Server: sent as they are. */
    private const PLAIN = [
        'Content-Type' => true, 'content-type' => true, 'Cache-Control' => true, 'cache-control' => true,
        'Location' => true, 'location' => true, 'Set-Cookie' => true, 'set-cookie' => true, 'ETag' => true,
        'Vary' => true, 'vary' => true, 'Allow' => true, 'Last-Modified' => true, 'Content-Encoding' => true,
        'Retry-After' => true, 'Content-Disposition' => true, 'WWW-Authenticate' => true, 'X-Request-Id' => true,
        'x-request-id' => true, 'X-Content-Type-Options' => true, 'X-Frame-Options' => true,
        'Referrer-Policy' => true, 'Strict-Transport-Security' => true, 'Content-Security-Policy' => true,
        'Access-Control-Allow-Origin' => true, 'Accept-Ranges' => true, 'Content-Range' => true,
    ];

    /** @var array<int, string> status => its status line */
    private array $statusLines = [];

    /** "Date: ...\r\n" of $dateSecond. */
    private string $dateLine = '';

    private int $dateSecond = -1;

    /** @param (\Closure(): int)|null $clock Unix seconds; time() by default (tests inject a fake clock) */
    public function __construct(private readonly ?\Closure $clock = null) {}

    /**
     * Status line + headers + the empty line.
     *
     * @param array<string, string|list<string>> $headers names as the application wrote them
     * @param ?int $contentLength bytes of body, or null for chunked (1.1) / close-delimited (1.0) streaming
     * @param string $version the request's version, "1.0" or "1.1"
     * @throws \ValueError on an invalid status, version, header name or value (CR, LF, NUL: injection)
     */
    public function head(int $status, array $headers, ?int $contentLength, string $version, bool $keepAlive, bool $headRequest = false, string $reason = ''): string
    {
        return $this->encode($status, $headers, true, $contentLength, $version, $keepAlive, $headRequest, $reason);
    }

    /**
     * head() for a Response: its headers are not checked again, since a Response cannot hold an invalid one
     * (every way in validates with FieldSyntax::assertResponseField). Status and version are still checked.
     *
     * @throws \ValueError on an invalid status or version
     */
    public function responseHead(Response $response, ?int $contentLength, string $version, bool $keepAlive, bool $headRequest = false): string
    {
        return $this->encode($response->status(), $response->headers(), false, $contentLength, $version, $keepAlive, $headRequest);
    }

    /**
     * A whole response with a string body, `Connection: close` and no Date, for bytes made ahead of the
     * moment they are sent (see ErrorResponse::encoded()): a Date would be the time they were made. dated()
     * adds it as they are sent.
     *
     * @throws \ValueError when the body is not a string, or on an invalid status
     */
    public function undated(Response $response): string
    {
        $body = $response->body();
        if (!\is_string($body)) {
            throw new \ValueError('an undated response is made whole: its body must be a string');
        }

        return $this->encode($response->status(), $response->headers(), false, \strlen($body), '1.1', false, false, '', false) . $body;
    }

    /**
     * Bytes made by undated(), with the Date of the moment they are sent: the current second's line (formatted
     * at most once a second) put after the status line.
     */
    public function dated(string $undated): string
    {
        $line = strpos($undated, "\r\n");
        if ($line === false) {
            throw new \ValueError('not a response made by undated(): no status line');
        }

        return substr($undated, 0, $line + 2) . $this->dateLine() . substr($undated, $line + 2);
    }

    /**
     * What head(), responseHead() and undated() do. Public for the server's path of nearly every response (a
     * string body, ResponseSender::writeWhole()): it has the status in hand and passes Response::headers() with
     * $validate false, two calls less than responseHead().
     *
     * @internal $validate false only for the headers of a Response (checked on their way in)
     * @param array<string, string|list<string>> $headers checked field by field when $validate
     * @param bool $dated whether a Date is added when the headers have none
     */
    public function encode(int $status, array $headers, bool $validate, ?int $contentLength, string $version, bool $keepAlive, bool $headRequest, string $reason = '', bool $dated = true): string
    {
        if ($reason === '') {
            // The status line of a known status, made once: this also proves the status is in range.
            $out = $this->statusLines[$status] ?? $this->statusLine($status);
        } else {
            if ($status < 100 || $status > 599) {
                throw new \ValueError("HTTP status must be between 100 and 599, got $status");
            }
            if (strcspn($reason, "\r\n\0") !== \strlen($reason)) {
                throw new \ValueError('Reason phrase contains CR, LF or NUL');
            }
            $out = "HTTP/1.1 $status $reason\r\n";
        }
        if ($version !== '1.1' && $version !== '1.0') {
            throw new \ValueError("HTTP version must be '1.0' or '1.1', got '$version'");
        }
        if ($contentLength !== null && $contentLength < 0) {
            throw new \ValueError("Content length must be >= 0 or null, got $contentLength");
        }
        $hasDate = !$dated;
        $hasServer = false;
        $fields = ''; // apart from the status line: the first field line is taken as it is, not copied onto it
        foreach ($headers as $name => $values) {
            // Common names, as usually spelled, are neither owned nor Date/Server: no strtolower() for them.
            if (!isset(self::PLAIN[$name])) {
                $lower = strtolower((string) $name);
                if (isset(self::OWNED[$lower]) && ($status !== 101 || $lower !== 'connection')) {
                    continue;
                }
                $hasDate = $hasDate || $lower === 'date';
                $hasServer = $hasServer || $lower === 'server';
            }
            if (!\is_array($values)) {
                $values = [$values];
            }
            foreach ($values as $value) {
                if ($validate) {
                    FieldSyntax::assertResponseField((string) $name, $value);
                }
                $fields .= "$name: $value\r\n";
            }
        }
        // The rest is put together in one string (one allocation), not appended piece by piece.
        $date = '';
        if (!$hasDate) {
            $now = $this->clock === null ? \time() : ($this->clock)();
            $date = $now === $this->dateSecond ? $this->dateLine : $this->dateLine();
        }
        $server = $hasServer ? '' : "Server: kiln\r\n";
        if ($status < 200) {
            return "$out$fields$date$server\r\n"; // interim or upgrade: no framing, no keep-alive management
        }
        $connection = !$keepAlive ? "Connection: close\r\n" : ($version === '1.0' ? "Connection: keep-alive\r\n" : '');
        if ($contentLength !== null && $status !== 204 && $status !== 304) {
            return "$out$fields$date{$server}Content-Length: $contentLength\r\n$connection\r\n"; // nearly every response
        }
        $framing = '';
        if ($status !== 204 && $status !== 304 && !$headRequest) {
            // (nothing follows a HEAD response: no framing needed, the connection can stay open)
            if ($version === '1.1') {
                $framing = "Transfer-Encoding: chunked\r\n";
            } elseif ($keepAlive) {
                $connection = "Connection: close\r\n"; // HTTP/1.0 streaming: the body ends when the connection closes
            }
        }
        return "$out$fields$date$server$framing$connection\r\n";
    }

    /** "HTTP/1.1 STATUS REASON" and CRLF, remembered per status. @throws \ValueError outside 100-599 */
    private function statusLine(int $status): string
    {
        if ($status < 100 || $status > 599) {
            throw new \ValueError("HTTP status must be between 100 and 599, got $status");
        }
        return $this->statusLines[$status] = "HTTP/1.1 $status " . self::reason($status) . "\r\n";
    }

    /** One chunk of a chunked body; "" for empty data, so the terminator is never emitted by accident. */
    public function chunk(string $data): string
    {
        if ($data === '') {
            return '';
        }
        return dechex(\strlen($data)) . "\r\n" . $data . "\r\n";
    }

    /**
     * The last chunk and the trailer section.
     *
     * @param array<string, string|list<string>> $trailers
     * @throws \ValueError on an invalid trailer name or value
     */
    public function end(array $trailers = []): string
    {
        $out = "0\r\n";
        foreach ($trailers as $name => $values) {
            $name = (string) $name;
            foreach (\is_array($values) ? $values : [$values] as $value) {
                FieldSyntax::assertResponseField($name, $value);
                $out .= "$name: $value\r\n";
            }
        }
        return $out . "\r\n";
    }

    public function continue(): string
    {
        return "HTTP/1.1 100 Continue\r\n\r\n";
    }

    public static function reason(int $status): string
    {
        return self::REASONS[$status] ?? match (intdiv($status, 100)) {
            1 => 'Informational',
            2 => 'Success',
            3 => 'Redirection',
            4 => 'Client Error',
            default => 'Server Error',
        };
    }

    /** Whether a response with this status, to this method, carries a body (RFC 9110 §6.4.1). */
    public static function hasBody(int $status, bool $headRequest): bool
    {
        return !$headRequest && $status >= 200 && $status !== 204 && $status !== 304;
    }

    /** The Date field line of the current second, formatted at most once per second. */
    private function dateLine(): string
    {
        $now = $this->clock === null ? \time() : ($this->clock)();
        if ($now !== $this->dateSecond) {
            $this->dateSecond = $now;
            $this->dateLine = 'Date: ' . gmdate('D, d M Y H:i:s', $now) . " GMT\r\n";
        }
        return $this->dateLine;
    }
}
