<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

/**
 * Sans-I/O parser of a CGI response (RFC 3875 §6) as CGI scripts, php-cgi and php-fpm write it: a header
 * block, an empty line, then the body. Used by every tier that reads CGI output (cgi, fork, php-cgi pool,
 * FastCGI upstream).
 *
 * API:
 * - `feed(string $bytes): ?CgiHead` — append output bytes. Returns the CgiHead on the one call that
 *   completes the header block, null on every other call. Bytes past the header block (in that call and
 *   every later one) are body: collect them with `body()`.
 * - `body(): string` — the body bytes buffered since the last call ('' before the head); passthrough,
 *   nothing is parsed or held back. Once the head is out a caller may also skip feed() and forward
 *   further output directly.
 * - `end(): CgiHead` — the output ended; returns the head, or throws when the header block was incomplete.
 * - `head(): ?CgiHead` — the head once parsed.
 * - Every failure is a CgiResponseException (answer 502). After one, the parser is dead: feed() and end()
 *   throw it again.
 *
 * Rules: lines end in LF or CRLF (a CR elsewhere is refused); `Name: value` with a token name, no space
 * before the colon, optional whitespace around the value; obs-fold (a line starting with SP/HT) is refused;
 * control characters other than HT in a value are refused; at least one field; the block (with its empty
 * line) is at most $maxHeaderBytes. `Status: NNN [reason]` with 200 ≤ NNN ≤ 599, at most once; at most one
 * `Location`. Status defaults to 302 with a `Location`, else 200. `Location: /path` without `Status` is a
 * local redirect (§6.2.2), any other `Location` a client redirect: see CgiRedirect.
 */
final class CgiResponseParser
{
    public const DEFAULT_MAX_HEADER_BYTES = 65536;

    /**
     * The bytes of a token (RFC 9110 §5.6.2): a field name is made of these only. In the order they are
     * common in names: strspn() looks each byte up in the mask from its start.
     */
    private const TOKEN = "etaoinsrcdlphmuygkfwbvxjqzTCAPSLMDERNOIXGHKUVBWFYJQZ-_0123456789.!#$%&'*+^`|~";

    /**
     * Names php-cgi and common scripts send, known to be tokens: checked with one hash lookup. strspn() is
     * O(length × mask) in PHP (about 5,000 instructions for `Content-type` with an alphabetical mask).
     */
    private const COMMON_NAMES = ['Content-type' => true, 'Content-Type' => true, 'X-Powered-By' => true, 'Set-Cookie' => true,
        'Location' => true, 'Status' => true, 'Cache-Control' => true, 'Expires' => true, 'Pragma' => true,
        'Last-Modified' => true, 'Content-Length' => true, 'Content-Disposition' => true, 'Vary' => true];

    /** Control characters a field value must not hold (HTAB is allowed). */
    private const CONTROL = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0A\x0B\x0C\x0D\x0E\x0F"
        . "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1A\x1B\x1C\x1D\x1E\x1F\x7F";

    private string $buffer = '';

    /** How far $buffer has been searched for the end of the header block. */
    private int $scanned = 0;

    private ?CgiHead $head = null;

    private ?CgiResponseException $error = null;

    /** @param CgiHeadCache|null $cache parsed blocks of earlier responses (a long-lived caller's) */
    public function __construct(
        private readonly int $maxHeaderBytes = self::DEFAULT_MAX_HEADER_BYTES,
        private readonly ?CgiHeadCache $cache = null,
    ) {
        if ($maxHeaderBytes < 2) {
            throw new \ValueError('maxHeaderBytes must be at least 2');
        }
    }

    /** @throws CgiResponseException */
    public function feed(string $bytes): ?CgiHead
    {
        if ($this->error !== null) {
            throw $this->error;
        }
        $this->buffer .= $bytes;
        if ($this->head !== null || $bytes === '') {
            return null;
        }
        if ($this->cache !== null && $this->scanned === 0) {
            // A block seen before, in CRLF lines (php-cgi's), found with one search. A cached block has no
            // empty line inside (it was parsed whole), so the head ends where findEnd() would end it.
            $end = \strpos($this->buffer, "\r\n\r\n");
            if ($end !== false && $end + 4 <= $this->maxHeaderBytes) {
                $head = $this->cache->get(\substr($this->buffer, 0, $end + 2));
                if ($head !== null) {
                    $this->buffer = (string) \substr($this->buffer, $end + 4);

                    return $this->head = $head;
                }
            }
        }
        $end = $this->findEnd();
        if ($end === null) {
            if (\strlen($this->buffer) > $this->maxHeaderBytes) {
                $this->fail("CGI header block exceeds {$this->maxHeaderBytes} bytes");
            }

            return null;
        }
        [$blockLength, $bodyStart] = $end;
        if ($bodyStart > $this->maxHeaderBytes) {
            $this->fail("CGI header block exceeds {$this->maxHeaderBytes} bytes");
        }
        $block = \substr($this->buffer, 0, $blockLength);
        $head = $this->cache?->get($block);
        if ($head === null) {
            try {
                $head = self::parseBlock($block);
            } catch (CgiResponseException $e) {
                $this->error = $e;
                $this->buffer = '';
                throw $e;
            }
            $this->cache?->put($block, $head);
        }
        $this->head = $head;
        $this->buffer = (string) \substr($this->buffer, $bodyStart);

        return $this->head;
    }

    public function body(): string
    {
        if ($this->head === null) {
            return '';
        }
        $body = $this->buffer;
        $this->buffer = '';

        return $body;
    }

    /** @throws CgiResponseException */
    public function end(): CgiHead
    {
        if ($this->error !== null) {
            throw $this->error;
        }
        if ($this->head === null) {
            $this->fail($this->buffer === '' ? 'The CGI script wrote nothing' : 'CGI output ended inside the header block');
        }

        return $this->head;
    }

    public function head(): ?CgiHead
    {
        return $this->head;
    }

    /**
     * Where the header block ends: [length of the block up to and including its last field's LF, offset
     * of the body]. Null when the empty line has not arrived yet.
     *
     * @return array{int, int}|null
     */
    private function findEnd(): ?array
    {
        $buf = $this->buffer;
        // An empty line first: a response without fields (refused in parseBlock()).
        if ($buf[0] === "\n") {
            return [0, 1];
        }
        if ($buf[0] === "\r" && \strlen($buf) > 1 && $buf[1] === "\n") {
            return [0, 2];
        }
        $from = \max(0, $this->scanned - 2);
        $length = \strlen($buf);
        while (($lf = \strpos($buf, "\n", $from)) !== false) {
            $next = $lf + 1;
            if ($next < $length && $buf[$next] === "\n") {
                return [$next, $next + 1];
            }
            if ($next + 1 < $length && $buf[$next] === "\r" && $buf[$next + 1] === "\n") {
                return [$next, $next + 2];
            }
            if ($next >= $length || ($buf[$next] === "\r" && $next + 1 >= $length)) {
                break; // the empty line may still come
            }
            $from = $next;
        }
        $this->scanned = $length;

        return null;
    }

    /** @throws CgiResponseException */
    private static function parseBlock(string $block): CgiHead
    {
        if ($block === '') {
            throw new CgiResponseException('The CGI response has no header fields');
        }
        $headers = [];
        $status = null;
        $reason = '';
        $location = null;
        foreach (\explode("\n", \substr($block, 0, -1)) as $line) {
            if (\str_ends_with($line, "\r")) {
                $line = \substr($line, 0, -1);
            }
            [$name, $value] = self::parseLine($line);
            $lower = \strtolower($name);
            if ($lower === 'status') {
                if ($status !== null) {
                    throw new CgiResponseException('The CGI response has more than one Status field');
                }
                [$status, $reason] = self::parseStatus($value);
                continue;
            }
            if ($lower === 'location') {
                if ($location !== null) {
                    throw new CgiResponseException('The CGI response has more than one Location field');
                }
                if ($value === '') {
                    throw new CgiResponseException('The CGI response has an empty Location field');
                }
                $location = $value;
            }
            $headers[] = [$name, $value];
        }
        $redirect = match (true) {
            $location === null => CgiRedirect::None,
            $status === null && $location[0] === '/' && !\str_starts_with($location, '//') => CgiRedirect::Local,
            default => CgiRedirect::Client,
        };

        return new CgiHead(
            $status ?? ($location !== null ? 302 : 200),
            $reason,
            $headers,
            $status !== null,
            $location,
            $redirect,
        );
    }

    /**
     * @return array{string, string}
     *
     * @throws CgiResponseException
     */
    private static function parseLine(string $line): array
    {
        if ($line !== '' && ($line[0] === ' ' || $line[0] === "\t")) {
            throw new CgiResponseException('The CGI response has a folded header line (obs-fold)');
        }
        $colon = \strpos($line, ':');
        if ($colon === false) {
            throw new CgiResponseException('Malformed CGI header line: ' . self::show($line));
        }
        $name = \substr($line, 0, $colon);
        if (!isset(self::COMMON_NAMES[$name]) && ($name === '' || \strspn($name, self::TOKEN) !== \strlen($name))) {
            throw new CgiResponseException('Malformed CGI header name: ' . self::show($name));
        }
        $value = \trim(\substr($line, $colon + 1), " \t");
        // ctype_print(): printable ASCII only (no locale makes a control character printable), one pass;
        // anything else (HTAB, bytes >= 0x80, '') gets the exact check, which is O(length × 32).
        if (!\ctype_print($value) && \strcspn($value, self::CONTROL) !== \strlen($value)) {
            throw new CgiResponseException("Control character in the CGI header $name");
        }

        return [$name, $value];
    }

    /**
     * @return array{int, string}
     *
     * @throws CgiResponseException
     */
    private static function parseStatus(string $value): array
    {
        if (\preg_match('/^([2-5][0-9][0-9])(?:[ \t]+(.*))?$/', $value, $m) !== 1) {
            throw new CgiResponseException('Malformed CGI Status field: ' . self::show($value));
        }

        return [(int) $m[1], $m[2] ?? ''];
    }

    private static function show(string $text): string
    {
        return \json_encode(\substr($text, 0, 80), \JSON_INVALID_UTF8_SUBSTITUTE | \JSON_UNESCAPED_SLASHES) ?: '?';
    }

    /**
     * @throws CgiResponseException
     *
     * @return never
     */
    private function fail(string $message): never
    {
        $this->error = new CgiResponseException($message);
        $this->buffer = '';
        throw $this->error;
    }
}
