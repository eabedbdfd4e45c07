<?php

declare(strict_types=1);

use Kiln\Loop\Loop;
use Kiln\Server\AcceptBalance;
use Kiln\Server\Metrics\Registry;
use Kiln\Server\WorkerContext;

/**
 * The worker context of a one-process micro bench: counts the requests served and stops the loop after
 * $stopAfter of them (null: never), logs to stderr, no accept balance, no retiring, no metrics.
 */
final class BenchWorkerContext implements WorkerContext
{
    public int $served = 0;

    public function __construct(private readonly ?int $stopAfter = null) {}

    public function requestServed(): void
    {
        if (++$this->served === $this->stopAfter) {
            Loop::stop();
        }
    }

    public function log(string $level, string $message): void
    {
        fwrite(STDERR, "[$level] $message\n");
    }

    public function workerId(): int
    {
        return 1;
    }

    public function acceptBalance(): ?AcceptBalance
    {
        return null;
    }

    public function retiring(string $reason): float
    {
        return 0.0;
    }

    public function drainTimeout(): float
    {
        return 0.0;
    }

    public function count(string $name, int $value): void {}

    public function metrics(): ?Registry
    {
        return null;
    }
}
