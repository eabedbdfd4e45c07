<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Internal;

use Kiln\Server\AcceptBalance;
use Kiln\Server\WorkerContext;

/** A worker as the HTTP core sees it, keeping what it is told. */
final class RecordingContext implements WorkerContext
{
    public int $served = 0;

    /** @var list<string> "level: message" */
    public array $logs = [];

    /** @var list<string> the reasons given to retiring() */
    public array $retiring = [];

    /** @var (\Closure(): void)|null run on each requestServed(), as a worker that winds down its service */
    public ?\Closure $onServed = null;

    public function __construct(private readonly float $drainTimeout = 5.0) {}

    public function firstRequestBegan(): void {}

    public function requestServed(): void
    {
        $this->served++;
        if ($this->onServed !== null) {
            ($this->onServed)();
        }
    }

    public function log(string $level, string $message): void
    {
        $this->logs[] = "$level: $message";
    }

    public function workerId(): int
    {
        return 1;
    }

    public function acceptBalance(): ?AcceptBalance
    {
        return null;
    }

    public function sharesListeners(): bool
    {
        return true;
    }

    public function retiring(string $reason): float
    {
        $this->retiring[] = $reason;
        return $this->drainTimeout;
    }

    public function drainTimeout(): float
    {
        return $this->drainTimeout;
    }

    public function count(string $name, int $value): void {}

    public function metrics(): ?\Kiln\Server\Metrics\Registry
    {
        return null;
    }
}
