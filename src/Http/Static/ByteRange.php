<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/** One satisfiable byte range of a representation: first and last byte offsets, both inclusive. */
final class ByteRange
{
    public function __construct(
        public readonly int $first,
        public readonly int $last,
    ) {
        if ($first < 0 || $last < $first) {
            throw new \ValueError("A byte range needs 0 <= first <= last, got $first-$last");
        }
    }

    public function length(): int
    {
        return $this->last - $this->first + 1;
    }

    /** The Content-Range value for this range of a representation of $size bytes. */
    public function contentRange(int $size): string
    {
        return "bytes {$this->first}-{$this->last}/$size";
    }
}
