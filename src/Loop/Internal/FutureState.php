<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\Loop;
use Kiln\Loop\UnhandledFutureError;

/**
 * @internal
 *
 * @template-covariant T
 */
final class FutureState
{
    private bool $complete = false;
    private mixed $value = null;
    private ?\Throwable $error = null;
    /** @var array<int, \Closure(?\Throwable, mixed): void> */
    private array $subscribers = [];
    private int $nextId = 0;
    /** Someone awaited or subscribed, or ignore() was called: the error (if any) was seen. */
    private bool $handled = false;

    /** @param bool $reportUnhandled report an error nobody observed when the state is destroyed (async()) */
    public function __construct(private readonly bool $reportUnhandled = false) {}

    public function __destruct()
    {
        if ($this->reportUnhandled && $this->error !== null && !$this->handled) {
            Loop::reportError(new UnhandledFutureError($this->error));
        }
    }

    /** Typed mixed so that T can be covariant: Deferred::complete() checks the type. */
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

    public function ignore(): void
    {
        $this->handled = true;
    }

    /**
     * Calls $callback(error, value) once when complete: at once if already complete, else from settle().
     * The callback MUST NOT throw. Returns an id for unsubscribe(), or null if it was called at once.
     *
     * @param \Closure(?\Throwable, mixed): void $callback
     */
    public function subscribe(\Closure $callback): ?int
    {
        $this->handled = true;
        if ($this->complete) {
            $callback($this->error, $this->value);

            return null;
        }
        $id = $this->nextId++;
        $this->subscribers[$id] = $callback;

        return $id;
    }

    public function unsubscribe(?int $id): void
    {
        if ($id !== null) {
            unset($this->subscribers[$id]);
        }
    }

    /** @return T */
    public function await(?Cancellation $cancellation): mixed
    {
        $this->handled = true;
        if (!$this->complete) {
            $cancellation?->throwIfRequested();
            $suspension = Loop::getSuspension();
            $id = $this->subscribe(static function () use ($suspension): void {
                $suspension->resume();
            });
            $subscription = $cancellation?->subscribe(function (CancelledException $e) use ($id, $suspension): void {
                if (isset($this->subscribers[$id])) {
                    unset($this->subscribers[$id]);
                    $suspension->throw($e);
                }
            });
            try {
                $suspension->suspend();
            } finally {
                $this->unsubscribe($id);
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

    private function settle(mixed $value, ?\Throwable $error): void
    {
        if ($this->complete) {
            throw new \Error('The future is already complete');
        }
        $this->complete = true;
        $this->value = $value;
        $this->error = $error;
        $subscribers = $this->subscribers;
        $this->subscribers = [];
        foreach ($subscribers as $subscriber) {
            $subscriber($error, $value);
        }
    }
}
