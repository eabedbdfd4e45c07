<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/** The answer of RangeParser: an outcome, and for Partial the ranges to send, in the order to send them. */
final class RangeSet
{
    /** @param list<ByteRange> $ranges non-empty for Partial, empty otherwise */
    private function __construct(
        public readonly RangeOutcome $outcome,
        public readonly array $ranges,
    ) {}

    public static function full(): self
    {
        return new self(RangeOutcome::Full, []);
    }

    public static function unsatisfiable(): self
    {
        return new self(RangeOutcome::Unsatisfiable, []);
    }

    /** @param non-empty-list<ByteRange> $ranges */
    public static function partial(array $ranges): self
    {
        return new self(RangeOutcome::Partial, $ranges);
    }
}
