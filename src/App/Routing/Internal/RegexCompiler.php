<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

use Kiln\App\Routing\Route;

/**
 * Compiles dynamic routes into chunks of alternation regexes (the "mark based" scheme: see Chunk), so a
 * lookup costs one preg_match per chunk instead of one per route. A chunk is capped both in routes and in
 * regex length to stay well below PCRE's compiled-pattern limit.
 *
 * @internal
 */
final class RegexCompiler
{
    public const MAX_ROUTES = 100;
    public const MAX_LENGTH = 16_000;

    /**
     * @param list<Route> $routes in priority order
     * @return list<Chunk>
     */
    public static function chunks(array $routes): array
    {
        $chunks = [];
        $regexes = [];
        $members = [];
        $length = 0;
        foreach ($routes as $route) {
            $regex = self::routeRegex($route->parsed);
            if ($members !== [] && (count($members) >= self::MAX_ROUTES || $length + strlen($regex) > self::MAX_LENGTH)) {
                array_push($chunks, ...self::chunk($regexes, $members));
                [$regexes, $members, $length] = [[], [], 0];
            }
            $regexes[] = $regex;
            $members[] = $route;
            $length += strlen($regex) + 12;
        }
        if ($members !== []) {
            array_push($chunks, ...self::chunk($regexes, $members));
        }
        return $chunks;
    }

    /** The regex of one pattern, no delimiters or anchors: required part, then nested optional groups. */
    public static function routeRegex(ParsedPattern $pattern): string
    {
        $parts = $pattern->parts;
        $suffix = '';
        for ($level = count($parts) - 1; $level > 0; $level--) {
            $suffix = '(?:' . self::partRegex($parts[$level]) . $suffix . ')?';
        }
        return self::partRegex($parts[0]) . $suffix;
    }

    /** @param list<string|Param> $part */
    private static function partRegex(array $part): string
    {
        $regex = '';
        foreach ($part as $piece) {
            $regex .= is_string($piece) ? preg_quote($piece, '~') : '(' . $piece->regex . ')';
        }
        return $regex;
    }

    /**
     * One chunk, or more if PCRE refuses the regex (too large once compiled: user regexes with big
     * counted repeats): then each half is tried on its own.
     *
     * @param list<string> $regexes
     * @param list<Route> $members
     * @return list<Chunk>
     */
    private static function chunk(array $regexes, array $members): array
    {
        $alternatives = [];
        foreach ($regexes as $mark => $regex) {
            $alternatives[] = "$regex(*MARK:$mark)";
        }
        $regex = '~^(?|' . implode('|', $alternatives) . ')$~';
        if (@preg_match($regex, '') !== false) {
            return [new Chunk($regex, $members)];
        }
        if (count($members) === 1) {
            throw new \ValueError("Route {$members[0]->label()}: PCRE cannot compile its regex (" . preg_last_error_msg() . ')');
        }
        $half = intdiv(count($members), 2);
        return [
            ...self::chunk(array_slice($regexes, 0, $half), array_slice($members, 0, $half)),
            ...self::chunk(array_slice($regexes, $half), array_slice($members, $half)),
        ];
    }
}
