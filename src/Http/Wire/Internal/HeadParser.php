<?php

declare(strict_types=1);

namespace Kiln\Http\Wire\Internal;

use Kiln\Http\Limits;
use Kiln\Http\Wire\ParseException;
use Kiln\Http\Wire\RequestHead;

/**
 * Turns a complete request head (already free of forbidden bytes, bare CR/LF and within the line and block
 * limits, see BlockScanner) into a validated RequestHead: request line, target form, fields, Host,
 * message framing (RFC 9112 §6), keep-alive and Expect.
 *
 * @internal
 */
final class HeadParser
{
    private const REQUEST_LINE = '/^([!#$%&\'*+\-.^_`|~0-9A-Za-z]+) ([\x21-\x7E]+) HTTP\/([0-9])\.([0-9])\z/';

    private const ABSOLUTE_FORM = '~^([A-Za-z][A-Za-z0-9+.\-]*)://([^/?]*)(.*)\z~';

    /**
     * @param string $block the head without its final CRLFCRLF
     * @param bool $wellFormed the block matched FieldSyntax::HEAD_LINES
     * @throws ParseException
     */
    public static function parse(string $block, Limits $limits, bool $wellFormed): RequestHead
    {
        $lines = \explode("\r\n", $block);
        if (\preg_match(self::REQUEST_LINE, $lines[0], $m) !== 1) {
            throw new ParseException(400, 'Malformed request line');
        }
        [, $method, $target, $major, $minor] = $m;
        $version = $major . '.' . $minor;
        if ($version !== '1.1' && $version !== '1.0') {
            throw new ParseException(505, "HTTP version $version is not supported");
        }
        if ($method === 'CONNECT') {
            throw new ParseException(501, 'CONNECT is not supported (Kiln is not a forward proxy)');
        }
        [$path, $query, $targetHost] = self::target($method, $target);

        $headers = FieldSyntax::parseFields($lines, 1, $limits, $wellFormed);

        $hosts = $headers['host'] ?? [];
        if (\count($hosts) > 1) {
            throw new ParseException(400, 'More than one Host header');
        }
        $host = '';
        if ($hosts !== []) {
            $host = FieldSyntax::host($hosts[0]) ?? throw new ParseException(400, 'Invalid Host header');
        } elseif ($version === '1.1') {
            throw new ParseException(400, 'HTTP/1.1 request without a Host header');
        }
        if ($targetHost !== null) {
            $host = $targetHost; // RFC 9112 §3.2.2: the absolute-form authority wins over Host
        }

        [$bodyKind, $length] = self::framing($headers, $version);

        $connection = $headers['connection'] ?? null;
        if ($version === '1.1') {
            $keepAlive = $connection === null || !FieldSyntax::listContains($connection, 'close');
        } else {
            $keepAlive = $connection !== null && FieldSyntax::listContains($connection, 'keep-alive')
                && !FieldSyntax::listContains($connection, 'close');
        }
        // Expectations other than 100-continue are ignored (RFC 9110 §10.1.1 makes 417 optional), and
        // HTTP/1.0 expectations must be ignored.
        $expect = $version === '1.1' && isset($headers['expect']) && FieldSyntax::listContains($headers['expect'], '100-continue');

        $head = new RequestHead($method, $target, $version, $headers, $path, $query, $host, $bodyKind, $length, $keepAlive, $expect);
        if ($length > $limits->bodySize) {
            // Refused with the head read whole: the exception carries it, for the access log.
            throw new ParseException(413, "Request body larger than {$limits->bodySize} bytes", $head);
        }

        return $head;
    }

    /**
     * @return array{string, string, ?string} path, query, authority host (absolute-form only)
     * @throws ParseException
     */
    private static function target(string $method, string $target): array
    {
        if (str_contains($target, '#')) {
            throw new ParseException(400, 'Request target must not contain a fragment');
        }
        $host = null;
        if ($target[0] === '/') {
            $rest = $target;
        } elseif ($target === '*') {
            if ($method !== 'OPTIONS') {
                throw new ParseException(400, 'Asterisk-form target is only allowed with OPTIONS');
            }
            return ['*', '', null];
        } elseif (preg_match(self::ABSOLUTE_FORM, $target, $m) === 1) {
            $scheme = strtolower($m[1]);
            if ($scheme !== 'http' && $scheme !== 'https') {
                throw new ParseException(400, "Unsupported URI scheme '$scheme' in request target");
            }
            $host = FieldSyntax::host($m[2]) ?? throw new ParseException(400, 'Invalid authority in absolute-form target');
            $rest = $m[3] === '' || $m[3][0] === '?' ? '/' . $m[3] : $m[3];
        } else {
            throw new ParseException(400, 'Malformed request target');
        }
        $q = strpos($rest, '?');
        if ($q === false) {
            return [$rest, '', $host];
        }
        return [substr($rest, 0, $q), substr($rest, $q + 1), $host];
    }

    /**
     * @param array<string, list<string>> $headers
     * @return array{int, int} body kind, content length
     * @throws ParseException
     */
    private static function framing(array $headers, string $version): array
    {
        $te = $headers['transfer-encoding'] ?? null;
        $cl = $headers['content-length'] ?? null;
        if ($te !== null) {
            if ($cl !== null) {
                throw new ParseException(400, 'Both Content-Length and Transfer-Encoding (request smuggling attempt?)');
            }
            if ($version === '1.0') {
                throw new ParseException(400, 'Transfer-Encoding in an HTTP/1.0 request');
            }
            FieldSyntax::checkTransferEncoding($te);
            return [RequestHead::BODY_CHUNKED, -1];
        }
        if ($cl === null) {
            return [RequestHead::BODY_NONE, 0];
        }
        if (\count($cl) > 1) {
            throw new ParseException(400, 'More than one Content-Length header');
        }
        $length = FieldSyntax::contentLength($cl[0]);
        return $length === 0 ? [RequestHead::BODY_NONE, 0] : [RequestHead::BODY_LENGTH, $length];
    }
}
