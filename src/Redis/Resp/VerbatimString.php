<?php

declare(strict_types=1);

namespace Kiln\Redis\Resp;

/** A RESP3 verbatim string (`=`): text with a three-letter format (`txt`, `mkd`). */
final class VerbatimString implements \Stringable
{
    public function __construct(public readonly string $format, public readonly string $text) {}

    public function __toString(): string
    {
        return $this->text;
    }
}
