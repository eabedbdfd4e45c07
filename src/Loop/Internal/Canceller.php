<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\Loop;

/**
 * The one Cancellation implementation the public ones delegate to.
 *
 * @internal
 */
final class Canceller implements Cancellation
{
    private ?CancelledException $exception = null;
    /** @var array<string, \Closure(CancelledException): void> */
    private array $callbacks = [];
    private int $nextId = 0;

    public function subscribe(\Closure $callback): string
    {
        $id = 'c' . $this->nextId++;
        $this->callbacks[$id] = $callback;
        if ($this->exception !== null) {
            $this->notify($id, $this->exception);
        }

        return $id;
    }

    public function unsubscribe(string $id): void
    {
        unset($this->callbacks[$id]);
    }

    public function isRequested(): bool
    {
        return $this->exception !== null;
    }

    public function throwIfRequested(): void
    {
        if ($this->exception !== null) {
            throw $this->exception;
        }
    }

    public function cancel(CancelledException $exception): void
    {
        if ($this->exception !== null) {
            return;
        }
        $this->exception = $exception;
        foreach ($this->callbacks as $id => $_) {
            $this->notify($id, $exception);
        }
    }

    public function subscriberCount(): int
    {
        return \count($this->callbacks);
    }

    private function notify(string $id, CancelledException $exception): void
    {
        Loop::defer(function () use ($id, $exception): void {
            $callback = $this->callbacks[$id] ?? null;
            unset($this->callbacks[$id]);
            if ($callback !== null) {
                $callback($exception);
            }
        });
    }
}
