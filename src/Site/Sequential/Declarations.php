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
 * failsWhenRunAgain() is narrower: a named function or a class, interface, trait or enum that no existence
 * check guards (unguarded()). Run a second time in the same process, such a file stops with a fatal "Cannot
 * redeclare" (at compile time for one at its top level, when it gets there for one in a block). One declared
 * in `if (!function_exists(...)) { … }` runs again safely; a constant declared again is a warning, not a
 * fatal error.
 */
final class Declarations
{
    /** Kinds of brace in unguarded(): a guard's block, the members of a class-like. */
    private const GUARD = 1;
    private const BODY = 2;

    /** Calls that make an `if` a guard: its block declares only what does not exist yet. */
    private const GUARDS = ['function_exists', 'class_exists', 'interface_exists', 'trait_exists', 'enum_exists'];

    /** @var FileAnswers<array{bool, bool}>|null [declares something, declares a function or class-like no existence check guards] */
    private static ?FileAnswers $answers = null;

    public static function inFile(string $path): bool
    {
        return self::read($path)[0];
    }

    /** Whether running the file a second time in this process is a fatal "Cannot redeclare" (see the class). */
    public static function failsWhenRunAgain(string $path): bool
    {
        return self::read($path)[1];
    }

    /** @return array{bool, bool} [declares something, declares a function or class-like no existence check guards] */
    private static function read(string $path): array
    {
        self::$answers ??= new FileAnswers(static function (string $source): array {
            $tokens = self::tokens($source); // read once for both answers; null: assume the worst
            $declares = $tokens === null || self::declaresIn($tokens);
            return [$declares, $tokens === null || ($declares && self::unguardedIn($tokens))];
        }, [true, true]); // unreadable now: assume the worst
        return self::$answers->of($path);
    }

    /**
     * Whether the source declares a named function or a class, interface, trait or enum that no existence check
     * guards: anywhere but in the block of an `if`/`elseif` whose condition calls one of self::GUARDS (or the
     * `else` after such a block). Top-level ones, ones in a namespace's braces or a bare `{ }`, and ones that
     * other conditions, loops, functions or closures declare all count: each is declared again by a second run.
     * A guard written with `if (…):` … `endif;` is not seen: its declarations count too (the cost of that is a
     * worker replaced for nothing, not a failed request).
     */
    public static function unguarded(string $source): bool
    {
        $tokens = self::tokens($source);
        return $tokens === null || self::unguardedIn($tokens);
    }

    /** @param list<array{int, string, int}|string> $tokens */
    private static function unguardedIn(array $tokens): bool
    {
        $blocks = []; // one entry per open brace: self::GUARD, self::BODY (a class-like's members) or 0
        $condition = null; // inside an if/elseif condition: its parenthesis depth
        $guarding = false; // the condition under way asks whether a name exists
        $next = 0; // what the next brace opens
        $closedGuard = false; // the brace just closed ended a guard's block (an `else` may follow)
        $previous = null;
        foreach ($tokens as $i => $token) {
            $id = \is_array($token) ? $token[0] : $token;
            if ($id === T_WHITESPACE || $id === T_COMMENT || $id === T_DOC_COMMENT) {
                continue;
            }
            if ($condition !== null) {
                if ($id === '(') {
                    $condition++;
                } elseif ($id === ')' && --$condition === 0) {
                    [$condition, $next] = [null, $guarding ? self::GUARD : 0];
                } elseif (($id === T_STRING || $id === T_NAME_FULLY_QUALIFIED)
                    && \in_array(strtolower(ltrim($token[1], '\\')), self::GUARDS, true)) {
                    $guarding = true;
                }
                continue;
            }
            if ($id === T_IF || $id === T_ELSEIF) {
                [$condition, $guarding] = [0, false];
            } elseif ($id === T_ELSE) {
                $next = $closedGuard ? self::GUARD : 0;
            } elseif ($id === '{' || $id === T_CURLY_OPEN || $id === T_DOLLAR_OPEN_CURLY_BRACES) {
                $blocks[] = $id === '{' ? $next : 0;
                $next = 0;
            } elseif ($id === '}') {
                $closedGuard = array_pop($blocks) === self::GUARD;
            } elseif ($id === ';' || $id === ':') {
                $next = 0;
            } elseif (($id === T_CLASS || $id === T_INTERFACE || $id === T_TRAIT || $id === T_ENUM) && $previous !== T_DOUBLE_COLON) {
                if ($previous !== T_NEW && !\in_array(self::GUARD, $blocks, true)) {
                    return true; // a named class-like, unguarded
                }
                $next = self::BODY; // its members follow (an anonymous class's too)
            } elseif ($id === T_FUNCTION && end($blocks) !== self::BODY && !\in_array(self::GUARD, $blocks, true)
                && self::namesFunctionOrClass($tokens, $i, $id, $previous)) {
                return true; // a named function, not a method, unguarded
            }
            $previous = $id;
        }
        return false;
    }

    public static function inSource(string $source): bool
    {
        $tokens = self::tokens($source);
        return $tokens === null || self::declaresIn($tokens);
    }

    /**
     * The source's tokens; keywords used as names (->class) come as T_STRING. Null when it does not parse (it would
     * not run anyway: callers assume the worst).
     *
     * @return list<array{int, string, int}|string>|null
     */
    public static function tokens(string $source): ?array
    {
        try {
            return token_get_all($source, TOKEN_PARSE);
        } catch (\ParseError) {
            return null;
        }
    }

    /** @param list<array{int, string, int}|string> $tokens */
    private static function declaresIn(array $tokens): bool
    {
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
    public static function next(array $tokens, int $i, int $nth = 1): int|string|null
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
