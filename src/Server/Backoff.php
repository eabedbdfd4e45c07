<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * Restart delay for a worker slot whose workers keep dying before serving a first request:
 * 0 after a healthy life, then initial, doubling per consecutive failure, capped at max.
 */
final class Backoff
{
    public function __construct(
        private readonly float $initial = 0.1,
        private readonly float $max = 10.0,
    ) {
        if ($initial <= 0 || $max < $initial) {
            throw new \ValueError('Backoff needs 0 < initial <= max');
        }
    }

    /** @param int $failures consecutive early deaths of this slot, including the one just seen */
    public function delay(int $failures): float
    {
        if ($failures <= 0) {
            return 0.0;
        }
        return min($this->max, $this->initial * 2 ** min($failures - 1, 30));
    }
}
