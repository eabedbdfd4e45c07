<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * Conditional requests against one selected representation (RFC 9110 §13), sans-I/O: its entity tag
 * and modification time in, a verdict out. Evaluation order is §13.2.2's:
 *
 * 1. If-Match (strong comparison; `*` holds since the file exists) false → 412;
 *    else, without If-Match, If-Unmodified-Since earlier than the file → 412.
 * 2. If-None-Match (weak comparison; `*` matches) matching → 304 for GET/HEAD, 412 otherwise;
 *    else, without If-None-Match, on GET/HEAD, If-Modified-Since not earlier than the file → 304.
 * 3. If-Range (ifRangeHolds()) decides whether a Range is honoured.
 *
 * Dates that are not HTTP-dates, lists of dates, and If-Modified-Since dates in the future are
 * ignored, as the RFC asks (Apache does the same; nginx's default compares for equality only).
 */
final class Preconditions
{
    public function __construct(
        private readonly string $etag,
        private readonly int $lastModified,
    ) {}

    /**
     * @param array<string, list<string>> $headers request headers, lower-cased names
     * @param ?int $now the clock, for tests; time() otherwise
     */
    public function evaluate(string $method, array $headers, ?int $now = null): Precondition
    {
        $safe = $method === 'GET' || $method === 'HEAD';
        if (isset($headers['if-match'])) {
            if (!$this->matches(EntityTags::parseList($headers['if-match']), strong: true)) {
                return Precondition::Failed;
            }
        } elseif (($date = self::date($headers['if-unmodified-since'] ?? [])) !== null && $this->lastModified > $date) {
            return Precondition::Failed;
        }
        if (isset($headers['if-none-match'])) {
            if ($this->matches(EntityTags::parseList($headers['if-none-match']), strong: false)) {
                return $safe ? Precondition::NotModified : Precondition::Failed;
            }
        } elseif ($safe && ($date = self::date($headers['if-modified-since'] ?? [])) !== null
            && $date <= ($now ?? time()) && $this->lastModified <= $date) {
            return Precondition::NotModified;
        }
        return Precondition::Proceed;
    }

    /**
     * Whether a Range may be honoured: true without If-Range; with it, true only for the same strong
     * entity tag, or the exact Last-Modified date. A weak tag or a malformed value never holds.
     *
     * @param array<string, list<string>> $headers
     */
    public function ifRangeHolds(array $headers): bool
    {
        $values = $headers['if-range'] ?? [];
        if ($values === []) {
            return true;
        }
        if (\count($values) > 1) {
            return false;
        }
        $value = trim($values[0], " \t");
        if (str_starts_with($value, '"') || str_starts_with($value, 'W/')) {
            return EntityTags::strongEquals($value, $this->etag);
        }
        return HttpDate::parse($value) === $this->lastModified;
    }

    /** @param list<string> $tags */
    private function matches(array $tags, bool $strong): bool
    {
        foreach ($tags as $tag) {
            if ($tag === '*') {
                return true;
            }
            if ($strong ? EntityTags::strongEquals($tag, $this->etag) : EntityTags::weakEquals($tag, $this->etag)) {
                return true;
            }
        }
        return false;
    }

    /** @param list<string> $values */
    private static function date(array $values): ?int
    {
        return \count($values) === 1 ? HttpDate::parse($values[0]) : null;
    }
}
