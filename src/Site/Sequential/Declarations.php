<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

/**
 * Whether a PHP file declares anything that outlives a request in a shared process: a named function, a
 * class, interface, trait or enum, a constant (`const`, define(), class_alias()). Read from the file's
 * tokens once per file and modification time. Conditional declarations count (a file that may declare
 * something is treated as one that does).
 *
 * A file that declares nothing ("pure": configuration, templates, page logic) can be run again on every
 * request even through require_once, as php-fpm does; one that declares something cannot (a second run
 * would redeclare), so it runs once per worker.
 */
final class Declarations
{
    /** Files kept in the cache before it is emptied (a site has a bounded number of files). */
    private const MAX = 10_000;

    /** Seconds a file's answer is trusted before its modification time is looked at again (as opcache). */
    private const REVALIDATE = 2.0;

    /** @var array<string, array{int, bool, float}> path => [mtime, declares, when the mtime was read] */
    private static array $cache = [];

    public static function inFile(string $path): bool
    {
        $now = microtime(true);
        $cached = self::$cache[$path] ?? null;
        if ($cached !== null && $now - $cached[2] < self::REVALIDATE) {
            return $cached[1];
        }
        clearstatcache(true, $path);
        $mtime = @filemtime($path);
        if ($mtime === false) {
            return true; // unreadable now: assume the worst
        }
        if ($cached !== null && $cached[0] === $mtime) {
            self::$cache[$path][2] = $now;
            return $cached[1];
        }
        if (\count(self::$cache) >= self::MAX) {
            self::$cache = [];
        }
        $source = @file_get_contents($path);
        $declares = $source === false || self::inSource($source);
        self::$cache[$path] = [$mtime, $declares, $now];
        return $declares;
    }

    public static function inSource(string $source): bool
    {
        try {
            $tokens = token_get_all($source, TOKEN_PARSE); // keywords used as names (->class) become T_STRING
        } catch (\ParseError) {
            return true; // it would not run anyway
        }
        $previous = null; // the last significant token
        foreach ($tokens as $i => $token) {
            $id = \is_array($token) ? $token[0] : null;
            if ($id === T_WHITESPACE || $id === T_COMMENT || $id === T_DOC_COMMENT) {
                continue;
            }
            $after = self::next($tokens, $i);
            $member = $previous === T_OBJECT_OPERATOR || $previous === T_NULLSAFE_OBJECT_OPERATOR || $previous === T_DOUBLE_COLON;
            $declares = match ($id) {
                T_FUNCTION => $after === T_STRING || ($after === '&' || $after === T_AMPERSAND_NOT_FOLLOWED_BY_VAR_OR_VARARG)
                    && self::next($tokens, $i, 2) === T_STRING,
                T_CLASS => $previous !== T_DOUBLE_COLON && $previous !== T_NEW, // not ::class, not new class
                T_INTERFACE, T_TRAIT, T_ENUM, T_CONST => true,
                T_STRING => !$member && $after === '(' && \in_array(strtolower($token[1]), ['define', 'class_alias'], true),
                T_NAME_FULLY_QUALIFIED => $after === '(' && \in_array(strtolower($token[1]), ['\\define', '\\class_alias'], true),
                default => false,
            };
            if ($declares) {
                return true;
            }
            $previous = $id ?? $token;
        }
        return false;
    }

    /**
     * The id (or character) of the $nth significant token after $i.
     *
     * @param list<array{int, string, int}|string> $tokens
     */
    private static function next(array $tokens, int $i, int $nth = 1): int|string|null
    {
        for ($j = $i + 1, $n = \count($tokens); $j < $n; $j++) {
            $token = $tokens[$j];
            $id = \is_array($token) ? $token[0] : $token;
            if ($id !== T_WHITESPACE && $id !== T_COMMENT && $id !== T_DOC_COMMENT && --$nth === 0) {
                return $id;
            }
        }
        return null;
    }
}
