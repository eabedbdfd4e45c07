<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * The string rules of path safety, sans-I/O (the file system checks — realpath inside the root — are
 * StaticFiles'):
 *
 * - decode(): percent-decodes once. An encoded slash, backslash or NUL (%2F %5C %00), a raw backslash
 *   or NUL, a path not starting with '/', and any `.` or `..` segment are refused (400). Dot segments
 *   are refused rather than normalised: a browser never sends them (it normalises first), so a request
 *   holding one is a probe, and refusing keeps one URL per file (no `/a/../b` alias for caches and
 *   rules to miss). A double-encoded `%252e%252e` decodes once to the literal name `%2e%2e`: no file.
 * - isHidden(): a segment starting with '.' (dotfiles, .git/, .env), except `.well-known` (RFC 8615).
 * - isSource(): PHP sources and their editor/backup copies, never sent as bytes.
 */
final class PathGuard
{
    /** PHP sources, also with editor/backup suffixes (index.php~, index.php.bak, #index.php#, index.php.1). */
    public const SOURCE = '/\.(?:php\d?|pht|phtml|phps|phpt|phar|inc)(?:[~#]|\.(?:bak|orig|old|save|swp|swo|tmp|dist|backup|\d+))*$/Di';

    /** The decoded path, or null when it must be refused with 400. */
    public static function decode(string $rawPath): ?string
    {
        if (str_contains($rawPath, '%')
            && (stripos($rawPath, '%2f') !== false || stripos($rawPath, '%5c') !== false || str_contains($rawPath, '%00'))) {
            return null;
        }
        $path = str_contains($rawPath, '%') ? rawurldecode($rawPath) : $rawPath;
        if ($path === '' || $path[0] !== '/' || str_contains($path, "\0") || str_contains($path, '\\')) {
            return null;
        }
        if (str_contains($path, '/.')) {
            foreach (explode('/', $path) as $segment) {
                if ($segment === '.' || $segment === '..') {
                    return null;
                }
            }
        }
        return $path;
    }

    /** Whether a decoded path (or a path relative to the root) crosses a dotfile or dot-directory. */
    public static function isHidden(string $path): bool
    {
        if (!str_contains('/' . $path, '/.')) {
            return false;
        }
        foreach (explode('/', $path) as $segment) {
            if ($segment !== '' && $segment[0] === '.' && $segment !== '.well-known') {
                return true;
            }
        }
        return false;
    }

    public static function isSource(string $path): bool
    {
        return preg_match(self::SOURCE, $path) === 1;
    }
}
