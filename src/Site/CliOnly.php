<?php

declare(strict_types=1);

namespace Kiln\Site;

use Kiln\Site\Sequential\Declarations;
use Kiln\Site\Sequential\FileAnswers;

/**
 * Whether a script guards itself against being run by a web server: at its top level, it stops unless PHP runs
 * from the command line (`if (php_sapi_name() != 'cli') { exit; }`, `PHP_SAPI === 'cli' or die(…)`,
 * `if (!defined('STDIN')) die(…)`). Pollers, cron jobs, installers and maintenance scripts do this (Cacti's
 * poller.php and cmd.php). Under a web SAPI the guard stops them; the sequential and fork tiers run PHP's CLI
 * SAPI (`PHP_SAPI` is `cli`), where it passes, and the script would do over HTTP what only a shell should start.
 * Those tiers refuse such a script instead (DocumentRoot).
 *
 * Read from the file's tokens once per file and modification time (checked again after 2 s, as opcache). Only
 * the requested file's own top level is read: a guard in a file it includes is not seen.
 */
final class CliOnly
{
    /** Token ids that end the script or the file, in a guard's body. */
    private const STOPS = [T_EXIT, T_THROW, T_RETURN];

    /** @var FileAnswers<bool>|null */
    private static ?FileAnswers $answers = null;

    public static function guards(string $path): bool
    {
        self::$answers ??= new FileAnswers(self::inSource(...), false); // unreadable: the tier reports it itself
        return self::$answers->of($path);
    }

    /** Whether the source's top level holds a guard that stops it unless PHP runs from the command line. */
    public static function inSource(string $source): bool
    {
        if (stripos($source, 'sapi') === false && stripos($source, 'STDIN') === false) {
            return false; // most scripts: no tokenizing
        }
        $tokens = Declarations::tokens($source);
        if ($tokens === null) {
            return false;
        }
        $depth = 0;
        $statement = [];
        foreach ($tokens as $i => $token) {
            $id = \is_array($token) ? $token[0] : $token;
            if ($id === T_WHITESPACE || $id === T_COMMENT || $id === T_DOC_COMMENT || $id === T_OPEN_TAG || $id === T_INLINE_HTML) {
                continue;
            }
            if ($depth === 0 && $id === T_IF && self::ifGuard($tokens, $i)) {
                return true;
            }
            if ($id === '{' || $id === T_CURLY_OPEN || $id === T_DOLLAR_OPEN_CURLY_BRACES) {
                $depth++;
            } elseif ($id === '}') {
                $depth = max(0, $depth - 1);
            }
            if ($depth > 0) {
                $statement = [];
                continue;
            }
            // `PHP_SAPI === 'cli' or die(…);` and the like: a top-level statement that starts with the SAPI test and stops.
            if ($id === ';' || $id === T_CLOSE_TAG) {
                if (self::orStops($statement)) {
                    return true;
                }
                $statement = [];
                continue;
            }
            $statement[] = [$id, \is_array($token) ? $token[1] : $token];
        }
        return false;
    }

    /**
     * Whether the `if` at $i tests that PHP does not run from the command line (a negation and the SAPI, or STDIN)
     * and its body stops the script (exit, die, throw, return).
     *
     * @param list<array{int, string, int}|string> $tokens
     */
    private static function ifGuard(array $tokens, int $i): bool
    {
        $n = \count($tokens);
        $j = $i + 1;
        while ($j < $n && $tokens[$j] !== '(') {
            $j++;
        }
        $condition = [];
        for ($level = 0; $j < $n; $j++) {
            $token = $tokens[$j];
            $id = \is_array($token) ? $token[0] : $token;
            $level += match ($id) {
                '(' => 1,
                ')' => -1,
                default => 0,
            };
            $condition[] = [$id, \is_array($token) ? $token[1] : $token];
            if ($level === 0) {
                break;
            }
        }
        $ids = array_column($condition, 0);
        // A guard tests the SAPI and nothing else: no variable (`PHP_SAPI !== 'cli' && !empty($_GET['ajax'])` is a page's
        // own branch), no "or".
        if (!self::negated($ids) || !self::testsSapi($condition) || \in_array(T_VARIABLE, $ids, true)
            || array_intersect([T_BOOLEAN_OR, T_LOGICAL_OR], $ids) !== []) {
            return false;
        }
        // The body stops the script unconditionally: a stop statement of the block itself (not in a closure, a call's
        // arguments or an inner block), or the body's one statement.
        $braces = $parens = 0;
        $first = true;
        for ($j++; $j < $n; $j++) {
            $token = $tokens[$j];
            $id = \is_array($token) ? $token[0] : $token;
            if ($id === T_WHITESPACE || $id === T_COMMENT || $id === T_DOC_COMMENT) {
                continue;
            }
            if ($braces === 0 && $first && $id !== '{' && $id !== ':') {
                return \in_array($id, self::STOPS, true); // `if (…) exit;`
            }
            $first = false;
            if ($id === '{' || $id === T_CURLY_OPEN || $id === T_DOLLAR_OPEN_CURLY_BRACES) {
                $braces++;
            } elseif ($id === '}') {
                if (--$braces <= 0) {
                    return false;
                }
            } elseif ($id === '(' || $id === '[') {
                $parens++;
            } elseif ($id === ')' || $id === ']') {
                $parens--;
            } elseif ($braces <= 1 && $parens === 0 && \in_array($id, self::STOPS, true)) {
                return true;
            } elseif ($id === T_ENDIF) {
                return false;
            }
        }
        return false;
    }

    /** @param list<int|string> $ids */
    private static function negated(array $ids): bool
    {
        return array_intersect(['!', T_IS_NOT_EQUAL, T_IS_NOT_IDENTICAL], $ids) !== [];
    }

    /**
     * `PHP_SAPI === 'cli' or die(…)`, `php_sapi_name() !== 'cli' && exit(…)`: the statement starts with the SAPI test,
     * and the stop is the operand right after the operator that makes it run when PHP is not the CLI.
     *
     * @param list<array{int|string, string}> $statement
     */
    private static function orStops(array $statement): bool
    {
        $first = $statement[0][0] ?? null;
        $name = strtolower(ltrim($statement[0][1] ?? '', '\\'));
        if (!(($first === T_STRING || $first === T_NAME_FULLY_QUALIFIED) && ($name === 'php_sapi' || $name === 'php_sapi_name')) && $first !== '!') {
            return false;
        }
        foreach ($statement as $k => [$id]) {
            $or = $id === T_LOGICAL_OR || $id === T_BOOLEAN_OR;
            if ($or || $id === T_LOGICAL_AND || $id === T_BOOLEAN_AND) {
                $test = \array_slice($statement, 0, $k);
                $stops = ($statement[$k + 1][0] ?? null) === T_EXIT;
                return $stops && self::testsSapi($test) && self::negated(array_column($test, 0)) !== $or;
            }
        }
        return false;
    }

    /**
     * Whether the tokens compare the SAPI with 'cli' (PHP_SAPI, php_sapi_name()) or ask whether STDIN exists.
     *
     * @param list<array{int|string, string}> $tokens
     */
    private static function testsSapi(array $tokens): bool
    {
        $sapi = $cli = $stdin = false;
        foreach ($tokens as [$id, $text]) {
            $name = strtolower(ltrim($text, '\\'));
            if (($id === T_STRING || $id === T_NAME_FULLY_QUALIFIED) && ($name === 'php_sapi' || $name === 'php_sapi_name')) {
                $sapi = true;
            } elseif ($id === T_CONSTANT_ENCAPSED_STRING) {
                $value = strtolower(substr($text, 1, -1));
                $cli = $cli || $value === 'cli';
                $stdin = $stdin || $value === 'stdin';
            }
        }
        return ($sapi && $cli) || ($stdin && self::calls($tokens, 'defined'));
    }

    /** @param list<array{int|string, string}> $tokens */
    private static function calls(array $tokens, string $function): bool
    {
        foreach ($tokens as [$id, $text]) {
            if (($id === T_STRING || $id === T_NAME_FULLY_QUALIFIED) && strtolower(ltrim($text, '\\')) === $function) {
                return true;
            }
        }
        return false;
    }
}
