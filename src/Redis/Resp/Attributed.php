<?php

declare(strict_types=1);

namespace Kiln\Redis\Resp;

/** A RESP3 reply preceded by an attribute (`|`): auxiliary data the server attached to it. */
final class Attributed
{
    /** @param array<int|string, mixed> $attributes */
    public function __construct(public readonly array $attributes, public readonly mixed $value) {}
}
