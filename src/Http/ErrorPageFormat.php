<?php

declare(strict_types=1);

namespace Kiln\Http;

/**
 * The representation of an error page, chosen from the request's Accept header (RFC 9110 §12.5.1).
 *
 * Each format gets the q-value of the most specific media range that matches it; the highest q wins;
 * on a tie, a range naming the type beats a wildcard. When only wildcards match (`*` `/` `*` from curl or
 * an HTTP library), a browser-like Accept (one that also names text/html, application/xhtml+xml or an
 * image type) gets HTML, anyone else plain text. Any `+json` type counts as JSON. Nothing acceptable
 * (or no Accept at all) gives plain text: an error is never answered with 406.
 */
enum ErrorPageFormat
{
    case Html;
    case Json;
    case Text;

    public static function fromAccept(string $accept): self
    {
        $ranges = self::parse($accept);
        $browser = self::isBrowserLike($ranges);
        $best = self::Text;
        $bestScore = [0.0, -1, 0];
        foreach ([self::Html, self::Json, self::Text] as $format) {
            [$q, $specificity] = $format->quality($ranges);
            if ($q <= 0.0) {
                continue;
            }
            $score = [$q, $specificity, $format->preference($browser)];
            if ($score > $bestScore) {
                [$best, $bestScore] = [$format, $score];
            }
        }
        return $best;
    }

    public function contentType(): string
    {
        return match ($this) {
            self::Html => 'text/html; charset=utf-8',
            self::Json => 'application/json',
            self::Text => 'text/plain; charset=utf-8',
        };
    }

    /**
     * The q-value of the most specific range matching this format, and how specific it was
     * (2: type/subtype, 1: type/*, 0: *\/*); [0.0, -1] when nothing matches.
     *
     * @param list<array{string, string, float}> $ranges
     * @return array{float, int}
     */
    private function quality(array $ranges): array
    {
        [$type, $subtype] = match ($this) {
            self::Html => ['text', 'html'],
            self::Json => ['application', 'json'],
            self::Text => ['text', 'plain'],
        };
        $found = [0.0, -1];
        foreach ($ranges as [$rangeType, $rangeSubtype, $q]) {
            $specificity = match (true) {
                $rangeType === $type && $rangeSubtype === $subtype => 2,
                // application/problem+json or any other structured-syntax JSON type is served as JSON.
                $this === self::Json && str_ends_with($rangeSubtype, '+json') => 2,
                $rangeType === $type && $rangeSubtype === '*' => 1,
                $rangeType === '*' && $rangeSubtype === '*' => 0,
                default => -1,
            };
            if ($specificity > $found[1]) {
                $found = [$q, $specificity];
            }
        }
        return $found;
    }

    private function preference(bool $browser): int
    {
        return match ($this) {
            self::Html => $browser ? 3 : 0,
            self::Text => 2,
            self::Json => 1,
        };
    }

    /** @param list<array{string, string, float}> $ranges */
    private static function isBrowserLike(array $ranges): bool
    {
        foreach ($ranges as [$type, $subtype, $q]) {
            if ($q > 0.0 && ($type === 'image' && $subtype !== '*'
                || "$type/$subtype" === 'text/html' || "$type/$subtype" === 'application/xhtml+xml')) {
                return true;
            }
        }
        return false;
    }

    /**
     * Media ranges as [type, subtype, q], lower-cased; malformed ranges and q-values are skipped.
     *
     * @return list<array{string, string, float}>
     */
    private static function parse(string $accept): array
    {
        $ranges = [];
        foreach (explode(',', strtolower($accept)) as $item) {
            $params = explode(';', $item);
            $range = trim(array_shift($params));
            if (preg_match('~^([a-z0-9!#$%&\'*+.^_`|\~-]+)/([a-z0-9!#$%&\'*+.^_`|\~-]+)$~', $range, $m) !== 1
                || ($m[1] === '*' && $m[2] !== '*')) {
                continue;
            }
            $q = 1.0;
            foreach ($params as $param) {
                [$name, $value] = array_map(trim(...), explode('=', $param, 2) + [1 => '']);
                if ($name === 'q') {
                    if (preg_match('~^(0(\.\d{0,3})?|1(\.0{0,3})?)$~', $value) !== 1) {
                        continue 2;
                    }
                    $q = (float) $value;
                }
            }
            $ranges[] = [$m[1], $m[2], $q];
        }
        return $ranges;
    }
}
