<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * Reads a Range header (RFC 9110 §14.1.2, 14.2) against a representation of known size. Sans-I/O.
 *
 * - Only the `bytes` unit (case-insensitive) counts; any other unit, any malformed spec (spaces inside
 *   a spec, `5-2`, letters, `bytes=`) makes the whole header ignored: Full, as the RFC asks.
 * - `first-last`, `first-` and `-suffix`; a last past the end is clipped, a suffix longer than the
 *   representation means all of it. Specs starting at or past the end are unsatisfiable and dropped;
 *   when none is left: Unsatisfiable (416). An empty representation has no bytes to range over: a
 *   suffix on it yields Full (the empty 200), any other spec Unsatisfiable.
 * - Overlapping and adjacent ranges are coalesced, so the bytes sent never exceed the representation
 *   (no "N copies" amplification); the merged ranges keep the order of their first spec in the request
 *   (§14.6 asks for the requested order). More than $maxRanges ranges left after that: Full, the
 *   answer Apache gives past MaxRanges, cheaper than hundreds of multipart parts.
 */
final class RangeParser
{
    public function __construct(private readonly int $maxRanges = 32)
    {
        if ($maxRanges < 1) {
            throw new \ValueError("maxRanges must be at least 1, got $maxRanges");
        }
    }

    public function parse(string $header, int $size): RangeSet
    {
        if (strncasecmp($header, 'bytes=', 6) !== 0) {
            return RangeSet::full();
        }
        $found = [];
        $suffixOnEmpty = false;
        $specs = 0;
        foreach (explode(',', substr($header, 6)) as $spec) {
            $spec = trim($spec, " \t");
            if ($spec === '') {
                continue; // empty list elements are allowed (RFC 9110 §5.6.1)
            }
            if (preg_match('/^(\d*)-(\d*)$/D', $spec, $m) !== 1 || ($m[1] === '' && $m[2] === '')) {
                return RangeSet::full();
            }
            $specs++;
            if ($m[1] === '') {
                $suffix = self::number($m[2]);
                if ($suffix > 0 && $size > 0) {
                    $found[] = [max(0, $size - $suffix), $size - 1];
                } elseif ($suffix > 0) {
                    $suffixOnEmpty = true;
                }
                continue;
            }
            $first = self::number($m[1]);
            $last = $m[2] === '' ? PHP_INT_MAX : self::number($m[2]);
            if ($last < $first) {
                return RangeSet::full();
            }
            if ($first < $size) {
                $found[] = [$first, min($last, $size - 1)];
            }
        }
        if ($specs === 0) {
            return RangeSet::full();
        }
        if ($found === []) {
            return $suffixOnEmpty ? RangeSet::full() : RangeSet::unsatisfiable();
        }
        $ranges = self::coalesce($found);
        if (\count($ranges) > $this->maxRanges) {
            return RangeSet::full();
        }
        return RangeSet::partial($ranges);
    }

    /** Digits to an int; more than fit is "past any file", PHP_INT_MAX. */
    private static function number(string $digits): int
    {
        $digits = ltrim($digits, '0');
        if ($digits === '') {
            return 0;
        }
        return \strlen($digits) > 18 ? PHP_INT_MAX : (int) $digits;
    }

    /**
     * Merges overlapping and adjacent ranges; each merged range takes the request position of its
     * earliest member.
     *
     * @param non-empty-list<array{int, int}> $found in request order
     * @return non-empty-list<ByteRange>
     */
    private static function coalesce(array $found): array
    {
        if (\count($found) === 1) {
            return [new ByteRange($found[0][0], $found[0][1])];
        }
        $order = array_keys($found);
        usort($order, static fn(int $a, int $b): int => $found[$a][0] <=> $found[$b][0] ?: $a <=> $b);
        $merged = [];
        $current = null;
        foreach ($order as $index) {
            [$first, $last] = $found[$index];
            if ($current !== null && $first <= $current[1] + 1) {
                $current[1] = max($current[1], $last);
                $current[2] = min($current[2], $index);
                continue;
            }
            if ($current !== null) {
                $merged[] = $current;
            }
            $current = [$first, $last, $index];
        }
        $merged[] = $current;
        usort($merged, static fn(array $a, array $b): int => $a[2] <=> $b[2]);
        return array_map(static fn(array $r): ByteRange => new ByteRange($r[0], $r[1]), $merged);
    }
}
