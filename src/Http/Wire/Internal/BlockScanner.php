<?php

declare(strict_types=1);

namespace Kiln\Http\Wire\Internal;

use Kiln\Http\Wire\ParseException;

/**
 * Finds the end of a field block (a request head or a trailer section: lines ended by CRLF, then an
 * empty line) in a growing buffer, and rejects it as early as possible: forbidden bytes, bare CR or LF
 * (400), a first line over its limit (414 for a request line) and a block over its limit (431).
 *
 * Errors are reported by position: each has the index of the byte whose arrival makes it certain, and
 * the earliest wins (ties: byte error, then line, then block). So the verdict does not depend on how the
 * bytes were split across reads. Scanning resumes where the previous call stopped: feeding a head one
 * byte at a time costs O(n), not O(n²).
 *
 * @internal
 */
final class BlockScanner
{
    /** Bytes of the block (from its start) already checked clean. */
    private int $scanned = 0;

    /** Offset of the first CRLF relative to the block start, once seen. */
    private int $lineEnd = -1;

    /** Whether the last block returned matched the shape regex (then only line limits remain to check). */
    public bool $wellFormed = false;

    /**
     * @param string $shape regex a clean block matches (FieldSyntax::HEAD_LINES or FIELD_LINES)
     */
    public function __construct(
        private readonly int $lineLimit,
        private readonly int $lineStatus,
        private readonly int $blockLimit,
        private readonly string $shape,
    ) {}

    public function reset(): void
    {
        $this->scanned = 0;
        $this->lineEnd = -1;
    }

    public function isFresh(): bool
    {
        return $this->scanned === 0;
    }

    /**
     * Returns the complete block from $start without its final CRLFCRLF (the caller consumes its length + 4),
     * or null when more bytes are needed. Call reset() before scanning the next block.
     *
     * @throws ParseException
     */
    public function scan(string $buf, int $start): ?string
    {
        $end = \strpos($buf, "\r\n\r\n", $start + ($this->scanned > 3 ? $this->scanned - 3 : 0));
        if ($end === false) {
            $this->check($buf, $start, \strlen($buf) - $start, false);
            return null;
        }
        $block = \substr($buf, $start, $end - $start);
        if ($end + 4 - $start <= $this->blockLimit
            && \preg_match($this->shape, $block) === 1
            && (int) \strpos($buf, "\r\n", $start) - $start <= $this->lineLimit
        ) {
            $this->wellFormed = true; // the common case: one regex pass proves the block clean
            return $block;
        }
        $this->check($buf, $start, $end + 4 - $start, true);
        $this->wellFormed = false;
        return $block;
    }

    /** @throws ParseException */
    private function check(string $buf, int $start, int $available, bool $complete): void
    {
        $best = \PHP_INT_MAX;
        $error = null;
        $limit = $available;
        if ($complete ? $available > $this->blockLimit : $available >= $this->blockLimit) {
            $best = $this->blockLimit - 1;
            $limit = $this->blockLimit;
            $error = new ParseException(431, "Header block larger than {$this->blockLimit} bytes");
        }
        $line = $this->lineDetection($buf, $start, $available);
        if ($line !== null && $line <= $best) {
            $best = $line;
            $error = new ParseException($this->lineStatus, "Request line longer than {$this->lineLimit} bytes");
        }
        $from = $this->scanned > 0 ? $this->scanned - 1 : 0;
        $to = min($limit, $best === \PHP_INT_MAX ? $limit : $best + 1);
        $byte = self::firstBadByte($buf, $start, $from, $to);
        if ($byte !== null && $byte <= $best) {
            $error = new ParseException(400, 'Forbidden byte in request head (control character, NUL, bare CR or bare LF)');
        }
        if ($error !== null) {
            throw $error;
        }
        $this->scanned = $available;
    }

    /** Index at which the first line is certainly longer than its limit, if it is. */
    private function lineDetection(string $buf, int $start, int $available): ?int
    {
        if ($this->lineEnd < 0) {
            $p = strpos($buf, "\r\n", $start + ($this->scanned > 0 ? $this->scanned - 1 : 0));
            if ($p !== false && $p - $start + 2 <= $available) {
                $this->lineEnd = $p - $start;
            }
        }
        $max = $this->lineLimit;
        if ($this->lineEnd >= 0) {
            if ($this->lineEnd <= $max) {
                return null;
            }
        } elseif ($available <= $max) {
            return null;
        }
        if ($buf[$start + $max] !== "\r") {
            return $max;
        }
        return $available > $max + 1 ? $max + 1 : null;
    }

    /**
     * Index (from the block start) at which the first forbidden byte, bare LF or bare CR in [$from, $to)
     * becomes certain; a CR is only known bare once the next byte is there.
     */
    private static function firstBadByte(string $buf, int $start, int $from, int $to): ?int
    {
        if ($from >= $to) {
            return null;
        }
        $lead = $from > 0 ? 1 : 0; // one byte of context, so a LF at $from sees whether a CR precedes it
        $region = \substr($buf, $start + $from - $lead, $to - $from + $lead);
        if (\preg_match(FieldSyntax::BAD_BYTE, $region, $m, \PREG_OFFSET_CAPTURE, $lead) !== 1) {
            return null;
        }
        $at = $from + $m[0][1] - $lead;
        if ($m[0][0] === "\r") {
            return $at + 1 < $to ? $at + 1 : null;
        }
        return $at;
    }
}
