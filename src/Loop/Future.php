<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Internal\FutureState;

/**
 * The eventual result of an operation, completed through its Deferred. Any number of Fibers (or
 * {main}) may await it; all are resumed when it completes.
 *
 * @template T
 */
final class Future
{
    /**
     * @internal Use Deferred::getFuture().
     *
     * @param FutureState<T> $state
     */
    public function __construct(private readonly FutureState $state) {}

    public function isComplete(): bool
    {
        return $this->state->isComplete();
    }

    /**
     * Suspends until complete; returns the value or throws the error.
     *
     * @return T
     *
     * @throws CancelledException when $cancellation is requested first (the Future is unaffected)
     */
    public function await(?Cancellation $cancellation = null): mixed
    {
        return $this->state->await($cancellation);
    }
}
