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
 *
 * failsWhenRunAgain() is narrower: a named function or a class, interface, trait or enum declared at the
 * file's top level, outside any block (a braced namespace does not count as one). Run a second time in
 * the same process, such a file stops with a fatal "Cannot redeclare" before its first line runs. One
 * guarded by `if (!function_exists(...))` sits in a block and runs again safely; a constant declared again
 * is a warning, not a fatal error.
 */
final class Declarations
{
    /** Files kept in the cache before it is emptied (a site has a bounded number of files). */
    private const MAX = 10_000;

    /** Seconds a file's answer is trusted before its modification time is looked at again (as opcache). */
    private const REVALIDATE = 2.0;

    /** @var array<string, array{int, bool, bool, float}> path => [mtime, declares, at top level, when the mtime was read] */
    private static array $cache = [];

    public static function inFile(string $path): bool
    {
        return self::read($path)[0];
    }

    /** Whether running the file a second time in this process is a fatal "Cannot redeclare" (see the class). */
    public static function failsWhenRunAgain(string $path): bool
    {
        return self::read($path)[1];
    }

    /** @return array{bool, bool} [declares something, declares a function or class-like at its top level] */
    private static function read(string $path): array
    {
        $now = microtime(true);
        $cached = self::$cache[$path] ?? null;
        if ($cached !== null && $now - $cached[3] < self::REVALIDATE) {
            return [$cached[1], $cached[2]];
        }
        clearstatcache(true, $path);
        $mtime = @filemtime($path);
        if ($mtime === false) {
            return [true, true]; // unreadable now: assume the worst
        }
        if ($cached !== null && $cached[0] === $mtime) {
            self::$cache[$path][3] = $now;
            return [$cached[1], $cached[2]];
        }
        if (\count(self::$cache) >= self::MAX) {
            self::$cache = [];
        }
        $source = @file_get_contents($path);
        $declares = $source === false || self::inSource($source);
        $topLevel = $source === false || ($declares && self::atTopLevel($source));
        self::$cache[$path] = [$mtime, $declares, $topLevel, $now];
        return [$declares, $topLevel];
    }

    /** Whether the source declares a named function or a class, interface, trait or enum outside any block. */
    public static function atTopLevel(string $source): bool
    {
        try {
            $tokens = token_get_all($source, TOKEN_PARSE);
        } catch (\ParseError) {
            return true;
        }
        $open = []; // one entry per open brace: whether it is a braced namespace's (which is no block)
        $namespace = false; // a namespace declaration is under way: its brace, if any, comes next
        $previous = null;
        foreach ($tokens as $i => $token) {
            $id = \is_array($token) ? $token[0] : $token;
            if ($id === T_WHITESPACE || $id === T_COMMENT || $id === T_DOC_COMMENT) {
                continue;
            }
            if ($id === '{' || $id === T_CURLY_OPEN || $id === T_DOLLAR_OPEN_CURLY_BRACES) {
                $open[] = $namespace && $id === '{';
                $namespace = false;
            } elseif ($id === '}') {
                array_pop($open);
            } elseif ($id === T_NAMESPACE && self::next($tokens, $i) !== T_NS_SEPARATOR) { // not namespace\f()
                $namespace = true;
            } elseif ($id === ';') {
                $namespace = false;
            } elseif (!\in_array(false, $open, true) && self::namesFunctionOrClass($tokens, $i, $id, $previous)) {
                return true;
            }
            $previous = $id;
        }
        return false;
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
                T_FUNCTION, T_CLASS, T_INTERFACE, T_TRAIT, T_ENUM => self::namesFunctionOrClass($tokens, $i, $id, $previous),
                T_CONST => true,
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
     * Whether token $i declares a named function or a class, interface, trait or enum: not a closure, not
     * `::class`, not `new class`.
     *
     * @param list<array{int, string, int}|string> $tokens
     */
    private static function namesFunctionOrClass(array $tokens, int $i, int|string $id, int|string|null $previous): bool
    {
        return match ($id) {
            T_FUNCTION => ($after = self::next($tokens, $i)) === T_STRING
                || ($after === '&' || $after === T_AMPERSAND_NOT_FOLLOWED_BY_VAR_OR_VARARG) && self::next($tokens, $i, 2) === T_STRING,
            T_CLASS => $previous !== T_DOUBLE_COLON && $previous !== T_NEW,
            T_INTERFACE, T_TRAIT, T_ENUM => true,
            default => false,
        };
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
