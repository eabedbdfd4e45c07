<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;

/**
 * Who waits for each reply of a connection, in the order the commands were written, with deadlines:
 * the Fiber of a single command (or the Suspension of {main}), resumed with the reply, an ErrorReply
 * included; or a pipeline's settle callback, called with each of its replies.
 *
 * @internal
 */
final class ReplyWaiters
{
    /** @var \SplQueue<array{\Fiber<mixed, mixed, mixed, mixed>|Suspension|\Closure(mixed, ?\Throwable): void, float}> */
    private readonly \SplQueue $queue;

    public function __construct()
    {
        $this->queue = new \SplQueue();
    }

    /** @param \Fiber<mixed, mixed, mixed, mixed>|Suspension|\Closure(mixed, ?\Throwable): void $waiter */
    public function add(\Fiber|Suspension|\Closure $waiter, float $deadline): void
    {
        $this->queue->enqueue([$waiter, $deadline]);
    }

    public function isEmpty(): bool
    {
        return $this->queue->isEmpty();
    }

    public function count(): int
    {
        return $this->queue->count();
    }

    /** The deadline of the oldest command still waiting, or null. */
    public function oldestDeadline(): ?float
    {
        return $this->queue->isEmpty() ? null : $this->queue->bottom()[1];
    }

    /**
     * Hands $value to the oldest waiter. Called from the loop's stack: a Fiber continues at once, inside
     * this call, until it suspends again.
     */
    public function resolveOldest(mixed $value): void
    {
        [$waiter] = $this->queue->dequeue();
        if ($waiter instanceof \Fiber || $waiter instanceof Suspension) {
            $waiter->resume($value);
        } else {
            $waiter($value, null);
        }
    }

    /** Fails every waiter with $reason, the oldest with $first when given. */
    public function failAll(\Throwable $reason, ?\Throwable $first = null): void
    {
        while (!$this->queue->isEmpty()) {
            [$waiter] = $this->queue->dequeue();
            self::fail($waiter, $first ?? $reason);
            $first = null;
        }
    }

    /**
     * A Fiber is resumed at once from the loop's stack, and from a deferred callback when this runs
     * inside another Fiber (never nested in the caller), as a Suspension does.
     *
     * @param \Fiber<mixed, mixed, mixed, mixed>|Suspension|\Closure(mixed, ?\Throwable): void $waiter
     */
    private static function fail(\Fiber|Suspension|\Closure $waiter, \Throwable $error): void
    {
        if ($waiter instanceof \Closure) {
            $waiter(null, $error);
        } elseif ($waiter instanceof Suspension) {
            $waiter->throw($error);
        } elseif (\Fiber::getCurrent() === null) {
            $waiter->throw($error);
        } else {
            Loop::defer(static function () use ($waiter, $error): void {
                $waiter->throw($error);
            });
        }
    }
}
