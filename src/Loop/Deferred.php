<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Internal\FutureState;

/**
 * The producing side of a Future. complete() or error() exactly once (a second call is an \Error).
 *
 * @template T
 */
final class Deferred
{
    /** @var FutureState<T> */
    private readonly FutureState $state;
    /** @var Future<T> */
    private readonly Future $future;

    public function __construct()
    {
        $this->state = new FutureState();
        $this->future = new Future($this->state);
    }

    /** @param T $value */
    public function complete(mixed $value = null): void
    {
        $this->state->complete($value);
    }

    public function error(\Throwable $error): void
    {
        $this->state->error($error);
    }

    public function isComplete(): bool
    {
        return $this->state->isComplete();
    }

    /** @return Future<T> */
    public function getFuture(): Future
    {
        return $this->future;
    }
}
