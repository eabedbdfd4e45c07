<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Sse;

use Kiln\Server\AcceptBalance;
use Kiln\Server\WorkerContext;

/** A worker as an HttpServer in a unit test sees it: it records what it is told. */
final class FakeWorkerContext implements WorkerContext
{
    /** @var list<string> "level: message" */
    public array $logged = [];

    public int $served = 0;

    /** @var array<string, int> what count() was told last */
    public array $counts = [];

    public function firstRequestBegan(): void {}

    public function requestServed(): void
    {
        $this->served++;
    }

    public function log(string $level, string $message): void
    {
        $this->logged[] = "$level: $message";
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
        return 1.0;
    }

    public function drainTimeout(): float
    {
        return 5.0;
    }

    public function count(string $name, int $value): void
    {
        $this->counts[$name] = $value;
    }

    public function metrics(): ?\Kiln\Server\Metrics\Registry
    {
        return null;
    }
}
