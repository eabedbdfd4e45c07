<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Internal\Canceller;

/** A Cancellation its owner requests by calling cancel(). */
final class DeferredCancellation
{
    private readonly Canceller $canceller;

    public function __construct()
    {
        $this->canceller = new Canceller();
    }

    /** Idempotent: only the first call counts. */
    public function cancel(?\Throwable $reason = null): void
    {
        $this->canceller->cancel(new CancelledException('The operation was cancelled', 0, $reason));
    }

    public function isCancelled(): bool
    {
        return $this->canceller->isRequested();
    }

    public function getCancellation(): Cancellation
    {
        return $this->canceller;
    }
}
