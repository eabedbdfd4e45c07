<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

use Kiln\Http\Client\ClientException;

/**
 * Field-level syntax of a response head (RFC 9112 §4, §5): status line, field lines, framing headers.
 *
 * @internal
 */
final class HeadSyntax
{
    private const TOKEN = '/^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$/D';

    /** Field values: visible bytes, SP, HTAB and obs-text; no other control byte (CR, LF, NUL...). */
    private const VALUE = '/^[^\x00-\x08\x0A-\x1F\x7F]*$/D';

    private function __construct() {}

    /** @return array{0: string, 1: int, 2: string} protocol version, status, reason */
    public static function statusLine(string $line): array
    {
        if (\preg_match('/^HTTP\/(1\.\d) (\d{3})(?: (.*))?$/D', $line, $m) !== 1) {
            throw new ClientException('Malformed status line: ' . self::quote($line));
        }
        $status = (int) $m[2];
        $reason = $m[3] ?? '';
        if ($status < 100 || $status > 599) {
            throw new ClientException("Invalid status code {$status}");
        }
        if (\preg_match(self::VALUE, $reason) !== 1) {
            throw new ClientException('Control character in the reason phrase');
        }

        return [$m[1], $status, $reason];
    }

    /**
     * @param list<string> $lines field lines without their CRLF
     *
     * @return array<string, list<string>>
     */
    public static function fields(array $lines, int $maxCount): array
    {
        if (\count($lines) > $maxCount) {
            throw new ClientException("Too many header fields (more than {$maxCount})");
        }
        $fields = [];
        foreach ($lines as $line) {
            if ($line !== '' && ($line[0] === ' ' || $line[0] === "\t")) {
                throw new ClientException('Obsolete line folding in a header field');
            }
            $colon = \strpos($line, ':');
            $name = $colon === false ? '' : \substr($line, 0, $colon);
            if (\preg_match(self::TOKEN, $name) !== 1) {
                throw new ClientException('Malformed header field: ' . self::quote($line));
            }
            $value = \trim(\substr($line, (int) $colon + 1), " \t");
            if (\preg_match(self::VALUE, $value) !== 1) {
                throw new ClientException("Control character in header field {$name}");
            }
            $fields[\strtolower($name)][] = $value;
        }

        return $fields;
    }

    /**
     * The elements of a comma-separated list header, lower-cased, empty elements dropped.
     *
     * @param list<string> $values
     *
     * @return list<string>
     */
    public static function tokens(array $values): array
    {
        $tokens = [];
        foreach ($values as $value) {
            foreach (\explode(',', $value) as $element) {
                $element = \strtolower(\trim($element, " \t"));
                if ($element !== '') {
                    $tokens[] = $element;
                }
            }
        }

        return $tokens;
    }

    /**
     * Content-Length: one decimal value, repeated identically at most (RFC 9110 §8.6).
     *
     * @param list<string> $values
     */
    public static function contentLength(array $values): int
    {
        $lengths = [];
        foreach ($values as $value) {
            foreach (\explode(',', $value) as $element) {
                $element = \trim($element, " \t");
                if (\preg_match('/^\d{1,18}$/D', $element) !== 1) {
                    throw new ClientException('Invalid Content-Length: ' . self::quote($value));
                }
                $lengths[(int) $element] = true;
            }
        }
        if (\count($lengths) !== 1) {
            throw new ClientException('Conflicting Content-Length values');
        }

        return (int) \array_key_first($lengths);
    }

    public static function quote(string $bytes): string
    {
        $bytes = \strlen($bytes) > 80 ? \substr($bytes, 0, 80) . '...' : $bytes;

        return '"' . \addcslashes($bytes, "\0..\37\177..\377\"\\") . '"';
    }
}
