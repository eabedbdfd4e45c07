<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Internal\FutureState;

/**
 * The eventual result of an operation, completed through its Deferred or by async(). Any number of
 * Fibers (or {main}) may await it; all are resumed when it completes.
 *
 * The combinators over Futures are functions next to async(): all(), any(), some(), race() (see
 * functions.php). A Future made by async() whose error is never observed (awaited, passed to a
 * combinator, or ignore()d) is reported as UnhandledFutureError to the loop's error handler when the
 * Future is destroyed; a Deferred's Future is not (its owner decided to fail it).
 *
 * @template-covariant T
 */
final class Future
{
    /**
     * @internal Use Deferred::getFuture() or async().
     *
     * @param FutureState<T> $state
     */
    public function __construct(private readonly FutureState $state) {}

    /**
     * A Future already completed with $value.
     *
     * @template V
     *
     * @param V $value
     *
     * @return self<V>
     */
    public static function complete(mixed $value = null): self
    {
        /** @var FutureState<V> $state */
        $state = new FutureState();
        $state->complete($value);

        return new self($state);
    }

    /**
     * A Future already failed with $error.
     *
     * @return self<never>
     */
    public static function error(\Throwable $error): self
    {
        /** @var FutureState<never> $state */
        $state = new FutureState();
        $state->error($error);

        return new self($state);
    }

    public function isComplete(): bool
    {
        return $this->state->isComplete();
    }

    /**
     * Marks an error of this Future as observed, so it is not reported as unhandled.
     *
     * @return $this
     */
    public function ignore(): self
    {
        $this->state->ignore();

        return $this;
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

    /**
     * @internal for the combinators
     *
     * @return FutureState<T>
     */
    public function state(): FutureState
    {
        return $this->state;
    }
}
