<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

/**
 * Parses a route pattern: literal text, `{name}` (default regex `[^/]+`), `{name:regex}` (braces in the
 * regex are counted by depth, so `\d{2,4}` works), and optional parts in square brackets, nestable, only at
 * the end of the pattern: `/blog[/{page:\d+}[/{sort}]]`.
 *
 * User regexes: plain `(...)` groups are made non-capturing (so `{lang:(en|de)}` works); what would change
 * group numbering or refer to it (named groups, branch reset, backreferences, recursion, verbs) is rejected.
 * Literal text outside the characters a path may carry is percent-encoded (`/café` matches `/caf%C3%A9`).
 *
 * @internal
 */
final class PatternParser
{
    private const DEFAULT_REGEX = '[^/]+';

    /** @throws \ValueError naming $label when the pattern is malformed */
    public static function parse(string $pattern, string $label): ParsedPattern
    {
        if ($pattern === '' || $pattern[0] !== '/') {
            throw new \ValueError("Route $label: a pattern must start with '/'");
        }
        /** @var non-empty-list<list<string|Param>> $parts */
        $parts = [[]];
        $level = 0;
        $literal = '';
        $closed = false;
        $names = [];
        $length = strlen($pattern);
        for ($i = 0; $i < $length; $i++) {
            $char = $pattern[$i];
            if ($closed && $char !== ']') {
                throw new \ValueError("Route $label: an optional part [...] may only come at the end of the pattern");
            }
            if ($char === '{') {
                self::flush($parts[$level], $literal);
                [$param, $i] = self::param($pattern, $i, $label);
                if (isset($names[$param->name])) {
                    throw new \ValueError("Route $label: parameter '{$param->name}' appears twice");
                }
                $names[$param->name] = true;
                $parts[$level][] = $param;
            } elseif ($char === '[') {
                self::flush($parts[$level], $literal);
                $parts[++$level] = [];
            } elseif ($char === ']') {
                self::flush($parts[$level], $literal);
                if ($level === 0) {
                    throw new \ValueError("Route $label: unbalanced ']'");
                }
                if ($parts[$level] === []) {
                    throw new \ValueError("Route $label: empty optional part '[]'");
                }
                $level--;
                $closed = true;
            } elseif ($char === '}') {
                throw new \ValueError("Route $label: unbalanced '}'");
            } else {
                $literal .= $char;
            }
        }
        self::flush($parts[$level], $literal);
        if ($level !== 0) {
            throw new \ValueError("Route $label: unclosed '['");
        }
        return new ParsedPattern($parts, self::prefix($parts));
    }

    /** @param list<string|Param> $part */
    private static function flush(array &$part, string &$literal): void
    {
        if ($literal === '') {
            return;
        }
        $encoded = (string) preg_replace_callback(
            "~[^A-Za-z0-9\\-._\\~!$&'()*+,;=:@/%]~",
            static fn(array $m): string => rawurlencode($m[0]),
            $literal,
        );
        $last = array_key_last($part);
        if ($last !== null && is_string($part[$last])) {
            $part[$last] .= $encoded;
        } else {
            $part[] = $encoded;
        }
        $literal = '';
    }

    /** @return array{Param, int} the placeholder starting at $start ('{') and the offset of its '}' */
    private static function param(string $pattern, int $start, string $label): array
    {
        if (preg_match('~\G\{([A-Za-z_][A-Za-z0-9_]*)([:}])~', $pattern, $m, 0, $start) !== 1) {
            throw new \ValueError("Route $label: a parameter needs a name ([A-Za-z_][A-Za-z0-9_]*) followed by ':' or '}' at offset $start");
        }
        $name = $m[1];
        $offset = $start + strlen($m[0]);
        if ($m[2] === '}') {
            return [new Param($name, self::DEFAULT_REGEX), $offset - 1];
        }
        $end = self::regexEnd($pattern, $offset);
        if ($end === null) {
            throw new \ValueError("Route $label: unbalanced '{' in parameter '$name'");
        }
        $regex = substr($pattern, $offset, $end - $offset);
        if ($regex === '') {
            throw new \ValueError("Route $label: parameter '$name' has an empty regex");
        }
        return [new Param($name, RegexSanitizer::sanitize($regex, "Route $label: parameter '$name'")), $end];
    }

    /** Offset of the '}' that closes a parameter's regex starting at $offset, counting braces by depth. */
    private static function regexEnd(string $pattern, int $offset): ?int
    {
        $depth = 1;
        $inClass = false;
        $length = strlen($pattern);
        for ($i = $offset; $i < $length; $i++) {
            $char = $pattern[$i];
            if ($char === '\\') {
                $i++;
            } elseif ($inClass) {
                $inClass = $char !== ']';
            } elseif ($char === '[') {
                $inClass = true;
                $i += RegexSanitizer::classLeadLength($pattern, $i + 1);
            } elseif ($char === '{') {
                $depth++;
            } elseif ($char === '}' && --$depth === 0) {
                return $i;
            }
        }
        return null;
    }

    /**
     * The leading literal text up to the end of its last whole segment.
     *
     * @param non-empty-list<list<string|Param>> $parts
     */
    private static function prefix(array $parts): string
    {
        $head = $parts[0][0] ?? null;
        if (!is_string($head)) {
            return '';
        }
        $next = $parts[1][0] ?? null;
        if (count($parts[0]) === 1 && (count($parts) === 1 || (is_string($next) && $next[0] === '/'))) {
            return $head;
        }
        return substr($head, 0, (int) strrpos($head, '/'));
    }
}
