<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

/**
 * Makes a user's parameter regex safe to embed in the grouped route regexes: capture group numbering
 * must stay ours, so `(` becomes `(?:`, and named groups, branch resets, backreferences, recursion and
 * verbs are refused. The `~` delimiter is escaped.
 *
 * @internal
 */
final class RegexSanitizer
{
    /** @throws \ValueError prefixed with $context */
    public static function sanitize(string $regex, string $context): string
    {
        $out = '';
        $inClass = false;
        $length = strlen($regex);
        for ($i = 0; $i < $length; $i++) {
            $char = $regex[$i];
            if ($char === '\\') {
                $next = $regex[$i + 1] ?? '';
                if (!$inClass && ($next === 'g' || $next === 'k' || ($next >= '1' && $next <= '9'))) {
                    throw new \ValueError("$context: backreferences are not supported in a route regex");
                }
                $out .= $char . $next;
                $i++;
            } elseif ($char === '~') {
                $out .= '\~';
            } elseif ($inClass) {
                $inClass = $char !== ']';
                $out .= $char;
            } elseif ($char === '[') {
                $lead = self::classLeadLength($regex, $i + 1);
                $out .= substr($regex, $i, $lead + 1);
                $i += $lead;
                $inClass = true;
            } elseif ($char === '(') {
                $out .= self::group(substr($regex, $i + 1, 3), $context);
            } else {
                $out .= $char;
            }
        }
        if (@preg_match('~^(?:' . $out . ')$~', '') === false) {
            throw new \ValueError("$context: invalid regex '$regex'");
        }
        return $out;
    }

    /** Length of a character class's literal lead after '[': an optional '^' then an optional ']'. */
    public static function classLeadLength(string $regex, int $offset): int
    {
        $lead = ($regex[$offset] ?? '') === '^' ? 1 : 0;
        return $lead + (($regex[$offset + $lead] ?? '') === ']' ? 1 : 0);
    }

    /** What to emit for '(' given the next few characters. */
    private static function group(string $after, string $context): string
    {
        if ($after === '' || ($after[0] !== '?' && $after[0] !== '*')) {
            return '(?:';
        }
        if ($after[0] === '*') {
            throw new \ValueError("$context: backtracking verbs (*...) are not supported in a route regex");
        }
        $kind = $after[1] ?? '';
        $lookbehind = $kind === '<' && in_array($after[2] ?? '', ['=', '!'], true);
        if (!$lookbehind && ($kind === '<' || $kind === 'P' || $kind === "'" || $kind === '|')) {
            throw new \ValueError("$context: named groups and branch resets are not supported in a route regex; use (...) or (?:...)");
        }
        if ($kind === 'R' || $kind === '&' || ctype_digit($kind) || (($kind === '+' || $kind === '-') && ctype_digit($after[2] ?? ''))) {
            throw new \ValueError("$context: recursion is not supported in a route regex");
        }
        return '(';
    }
}
