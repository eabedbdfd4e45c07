<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

/**
 * Delay before the next connection attempt after $failures failed ones in a row: initial, doubling,
 * capped at max, each multiplied by a random factor in [0.5, 1] so that many workers that lost Redis
 * together do not knock on it together.
 *
 * @internal
 */
final class Backoff
{
    public function __construct(private readonly float $initial, private readonly float $max) {}

    public function delay(int $failures): float
    {
        if ($failures <= 0) {
            return 0.0;
        }
        $ceiling = min($this->max, $this->initial * 2 ** min($failures - 1, 30));

        return $ceiling * (0.5 + 0.5 * mt_rand() / mt_getrandmax());
    }
}
