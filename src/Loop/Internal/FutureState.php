<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;

/**
 * @internal
 *
 * @template T
 */
final class FutureState
{
    private bool $complete = false;
    /** @var T|null */
    private mixed $value = null;
    private ?\Throwable $error = null;
    /** @var array<int, Suspension> */
    private array $waiters = [];
    private int $nextId = 0;

    /** @param T $value */
    public function complete(mixed $value): void
    {
        $this->settle($value, null);
    }

    public function error(\Throwable $error): void
    {
        $this->settle(null, $error);
    }

    public function isComplete(): bool
    {
        return $this->complete;
    }

    /** @return T */
    public function await(?Cancellation $cancellation): mixed
    {
        if (!$this->complete) {
            $cancellation?->throwIfRequested();
            $suspension = Loop::getSuspension();
            $id = $this->nextId++;
            $this->waiters[$id] = $suspension;
            $subscription = $cancellation?->subscribe(function (CancelledException $e) use ($id): void {
                $waiter = $this->waiters[$id] ?? null;
                unset($this->waiters[$id]);
                $waiter?->throw($e);
            });
            try {
                $suspension->suspend();
            } finally {
                unset($this->waiters[$id]);
                if ($subscription !== null) {
                    $cancellation?->unsubscribe($subscription);
                }
            }
        }
        if ($this->error !== null) {
            throw $this->error;
        }

        /** @var T */
        return $this->value;
    }

    /** @param T|null $value */
    private function settle(mixed $value, ?\Throwable $error): void
    {
        if ($this->complete) {
            throw new \Error('The future is already complete');
        }
        $this->complete = true;
        $this->value = $value;
        $this->error = $error;
        $waiters = $this->waiters;
        $this->waiters = [];
        foreach ($waiters as $waiter) {
            $waiter->resume();
        }
    }
}
