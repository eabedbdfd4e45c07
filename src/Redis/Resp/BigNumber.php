<?php

declare(strict_types=1);

namespace Kiln\Redis\Resp;

/** A RESP3 big number (`(`), kept as its decimal digits: PHP's int cannot hold it. */
final class BigNumber implements \Stringable
{
    public function __construct(public readonly string $digits) {}

    public function __toString(): string
    {
        return $this->digits;
    }
}
