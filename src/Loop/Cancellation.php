<?php

declare(strict_types=1);

namespace Kiln\Loop;

/**
 * A request to give up an operation, observed by whoever performs it.
 *
 * - subscribe() callbacks run from a deferred loop callback after the request (or soon after
 *   subscribing, if it was already requested), once each, and never after unsubscribe().
 * - unsubscribe() of an unknown id is a no-op.
 */
interface Cancellation
{
    /** @param \Closure(CancelledException): void $callback */
    public function subscribe(\Closure $callback): string;

    public function unsubscribe(string $id): void;

    public function isRequested(): bool;

    /** @throws CancelledException */
    public function throwIfRequested(): void;
}
