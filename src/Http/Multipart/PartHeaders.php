<?php

declare(strict_types=1);

namespace Kiln\Http\Multipart;

use Kiln\Http\BadRequestBodyException;

/**
 * The header block of one multipart/form-data part: its field name, filename (null for a plain field;
 * without a directory part) and the filename's full path as sent (a browser sends a file's folders within the
 * chosen one for a folder upload), and Content-Type (RFC 7578 §4.2, filename* per RFC 5987/8187).
 *
 * @internal
 */
final class PartHeaders
{
    private const TOKEN = '[!#$%&\'*+\-.^_`|~0-9A-Za-z]+';

    private function __construct(
        public readonly string $name,
        public readonly ?string $filename,
        public readonly string $contentType,
        public readonly ?string $fullPath = null,
    ) {}

    /** @throws BadRequestBodyException */
    public static function parse(string $block): self
    {
        $headers = [];
        foreach ($block === '' ? [] : explode("\r\n", $block) as $line) {
            if (preg_match('/\A(' . self::TOKEN . '):[ \t]*+([^\x00-\x08\x0A-\x1F\x7F]*?)[ \t]*\z/', $line, $m) !== 1) {
                throw new BadRequestBodyException('Malformed multipart part header line');
            }
            $headers[strtolower($m[1])] ??= $m[2];
        }
        $disposition = $headers['content-disposition'] ?? throw new BadRequestBodyException('Multipart part without Content-Disposition');
        [$type, $params] = self::disposition($disposition);
        if ($type !== 'form-data' || !isset($params['name'])) {
            throw new BadRequestBodyException('Multipart part is not "form-data" with a name');
        }
        $filename = isset($params['filename*']) ? self::extValue($params['filename*']) : null;
        $filename ??= $params['filename'] ?? null;
        $fullPath = $filename === null ? null : preg_replace('/[\x00-\x1F\x7F]/', '', $filename) ?? '';
        return new self($params['name'], $fullPath === null ? null : self::baseName($fullPath), $headers['content-type'] ?? '', $fullPath);
    }

    /**
     * @return array{string, array<string, string>} lower-cased type and parameters (first one wins)
     * @throws BadRequestBodyException
     */
    private static function disposition(string $value): array
    {
        $pattern = '/\G[ \t]*+;[ \t]*+(' . self::TOKEN . ')[ \t]*+=[ \t]*+("(?:[^"\\\\]|\\\\.)*+"|[^;"]*?)[ \t]*+(?=;|\z)/';
        $semi = strpos($value, ';');
        $type = strtolower(trim($semi === false ? $value : substr($value, 0, $semi), " \t"));
        $params = [];
        $offset = $semi === false ? \strlen($value) : $semi;
        while ($offset < \strlen($value)) {
            if (preg_match($pattern, $value, $m, 0, $offset) !== 1) {
                throw new BadRequestBodyException('Malformed Content-Disposition in a multipart part');
            }
            $offset += \strlen($m[0]);
            $raw = $m[2];
            if ($raw !== '' && $raw[0] === '"') {
                // Only \" and \\ are escapes: a Windows path ("C:\dir\a.txt") keeps its backslashes.
                $raw = preg_replace('/\\\\(["\\\\])/', '$1', substr($raw, 1, -1)) ?? '';
            }
            $params[strtolower($m[1])] ??= $raw;
        }
        return [$type, $params];
    }

    /** RFC 8187 ext-value (charset'lang'pct-encoded) as UTF-8; null when unusable. */
    private static function extValue(string $value): ?string
    {
        if (preg_match("/\\A(UTF-8|ISO-8859-1)'[A-Za-z0-9\\-]*'((?:[!#$&+\\-.^_`|~0-9A-Za-z]|%[0-9A-Fa-f]{2})*)\\z/i", $value, $m) !== 1) {
            return null;
        }
        $decoded = rawurldecode($m[2]);
        if (strcasecmp($m[1], 'UTF-8') === 0) {
            return preg_match('//u', $decoded) === 1 ? $decoded : null;
        }
        return preg_replace_callback('/[\x80-\xFF]/', static fn(array $c): string => \chr(0xC0 | \ord($c[0]) >> 6) . \chr(0x80 | (\ord($c[0]) & 0x3F)), $decoded);
    }

    /** Drops any directory part (either slash), as PHP does for $_FILES names (control characters are gone already). */
    private static function baseName(string $filename): string
    {
        $cut = max((int) strrpos($filename, '/'), (int) strrpos($filename, '\\'));
        if ($cut > 0 || ($filename !== '' && ($filename[0] === '/' || $filename[0] === '\\'))) {
            $filename = substr($filename, $cut + 1);
        }
        return $filename;
    }
}
