<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

use Kiln\Isolation\FastCgi\FastCgiTimeoutException;
use Kiln\Loop\Loop;

/**
 * The time limits of one request: each wait on the responder may last $readTimeout, and all of them
 * together must end by the total limit (if any).
 *
 * @internal
 */
final class Deadline
{
    private readonly float $until;

    public function __construct(
        private readonly string $responder,
        private readonly float $readTimeout,
        private readonly ?float $total,
    ) {
        $this->until = $total === null ? \INF : Loop::now() + $total;
    }

    /** Seconds the next wait may last. */
    public function next(): float
    {
        return \min($this->readTimeout, $this->until - Loop::now());
    }

    public function timeout(string $waitingFor): FastCgiTimeoutException
    {
        if ($this->total !== null && Loop::now() >= $this->until - 0.0005) {
            return new FastCgiTimeoutException("The request to FastCGI responder {$this->responder} took longer than its limit of {$this->total} s ({$waitingFor})");
        }

        return new FastCgiTimeoutException("FastCGI responder {$this->responder} was silent for {$this->readTimeout} s ({$waitingFor})");
    }
}
