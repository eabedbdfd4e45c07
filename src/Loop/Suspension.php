<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Internal\SuspensionState;

/**
 * Suspends the current Fiber until another party resumes it (see Loop::getSuspension()).
 *
 * - resume()/throw() MAY be called from anywhere: a loop callback (the Fiber then continues at once,
 *   inside that callback), another Fiber (the Fiber continues from a deferred callback, never nested
 *   in the caller), or before suspend() (suspend() then returns at once). Each suspend() takes exactly
 *   one resume()/throw(); a second one before the next suspend() is an \Error.
 * - In {main} (no Fiber), suspend() runs the loop until resumed, like revolt's main suspension: this
 *   is how a script or a test waits for Fibers without nesting run(). It throws \Error if the loop is
 *   already running (a callback must never block) or if the loop stops before the resumption.
 */
final class Suspension
{
    private SuspensionState $state = SuspensionState::Idle;
    private mixed $value = null;
    private ?\Throwable $error = null;

    /**
     * @internal Use Loop::getSuspension().
     *
     * @param \Fiber<mixed, mixed, mixed, mixed>|null $fiber
     */
    public function __construct(private readonly ?\Fiber $fiber) {}

    public function suspend(): mixed
    {
        if ($this->state === SuspensionState::Idle) {
            if (\Fiber::getCurrent() !== $this->fiber) {
                throw new \Error('Suspension::suspend() must be called in the Fiber that called Loop::getSuspension()');
            }
            $this->state = SuspensionState::Suspended;
            try {
                $this->fiber === null ? $this->runLoop() : \Fiber::suspend();
            } catch (\Throwable $e) {
                $this->state = SuspensionState::Idle;
                throw $e;
            }
        }
        if ($this->state !== SuspensionState::Resumed) {
            $this->state = SuspensionState::Idle;
            throw new \Error('The Fiber was resumed by something other than its Suspension');
        }
        $this->state = SuspensionState::Idle;
        [$value, $error, $this->value, $this->error] = [$this->value, $this->error, null, null];
        if ($error !== null) {
            throw $error;
        }

        return $value;
    }

    public function resume(mixed $value = null): void
    {
        $this->settle($value, null);
    }

    public function throw(\Throwable $error): void
    {
        $this->settle(null, $error);
    }

    private function settle(mixed $value, ?\Throwable $error): void
    {
        if ($this->state === SuspensionState::Resumed) {
            throw new \Error('This suspension was already resumed; call suspend() before resuming it again');
        }
        $waiting = $this->state === SuspensionState::Suspended;
        $this->state = SuspensionState::Resumed;
        $this->value = $value;
        $this->error = $error;
        if (!$waiting) {
            return;
        }
        $fiber = $this->fiber;
        if ($fiber === null) {
            Loop::get()->stop(); // ends the run() that suspend() is blocked in
        } elseif (\Fiber::getCurrent() === null) {
            $fiber->resume();
        } else {
            // queue(), not defer(): no watcher to make, file and cancel for a resume nothing ever cancels.
            Loop::get()->queue(static function () use ($fiber): void {
                $fiber->resume();
            });
        }
    }

    private function runLoop(): void
    {
        $driver = Loop::get();
        if ($driver->isRunning()) {
            throw new \Error('Cannot suspend {main} inside a loop callback (it would block the loop): run the code in Loop::async()');
        }
        Loop::run();
        if ($this->state === SuspensionState::Suspended) {
            throw new \Error('The loop stopped (nothing left to wait for, or stop() was called) before the suspension in {main} was resumed');
        }
    }
}
