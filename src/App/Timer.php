<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\App\Internal\TimerState;
use Kiln\Loop\Loop;

/**
 * A timer of the app (App::every(), after(), everyOnNode()): the handle to cancel it. It belongs to the
 * worker process that registered it: cancel() stops it there (a node-wide timer cancelled in one worker
 * keeps its turn in the others).
 */
final class Timer
{
    private TimerState $state = TimerState::Waiting;

    private ?string $watcher = null;

    /** The callback has not returned yet: a repeat that comes meanwhile is skipped, not stacked. */
    private bool $running = false;

    /**
     * @param \Closure(): mixed $callback
     * @param ?string $node the name of a node-wide timer; null: this worker's own
     */
    public function __construct(
        public readonly float $seconds,
        public readonly bool $repeat,
        private readonly \Closure $callback,
        public readonly ?string $node = null,
    ) {
        if (!is_finite($seconds) || $seconds <= 0) {
            throw new \ValueError("A timer needs a number of seconds above 0, got $seconds");
        }
        if ($node !== null && preg_match('/^[A-Za-z0-9._:-]{1,64}$/D', $node) !== 1) {
            throw new \ValueError("A node-wide timer's name is 1-64 characters of A-Z, a-z, 0-9, '.', '_', ':' or '-', got '$node'");
        }
    }

    public function cancel(): void
    {
        if ($this->state === TimerState::Waiting || $this->state === TimerState::Armed) {
            $this->disarm();
            $this->state = $this->state->to(TimerState::Cancelled);
        }
    }

    public function isCancelled(): bool
    {
        return $this->state === TimerState::Cancelled;
    }

    /**
     * @internal the worker runs it: $may says whether this worker may fire it now (a node-wide lease),
     * $failed is told what the callback threw
     *
     * @param \Closure(): bool $may
     * @param \Closure(\Throwable): void $failed
     */
    public function arm(\Closure $may, \Closure $failed): void
    {
        if ($this->state !== TimerState::Waiting) {
            return;
        }
        $this->state = $this->state->to(TimerState::Armed);
        $fire = function () use ($may, $failed): void {
            if (!$this->repeat) {
                $this->watcher = null;
                $this->state = $this->state->to(TimerState::Done);
            }
            if ($this->running || !$may()) {
                return;
            }
            $this->running = true;
            Loop::async(function () use ($failed): void {
                try {
                    ($this->callback)();
                } catch (\Throwable $e) {
                    $failed($e);
                }
                $this->running = false;
            });
        };
        $this->watcher = $this->repeat ? Loop::repeat($this->seconds, $fire) : Loop::delay($this->seconds, $fire);
        // A timer alone does not keep a worker's loop running: the worker decides when it ends.
        Loop::unreference($this->watcher);
    }

    /** @internal its worker stops: it fires no more there */
    public function stop(): void
    {
        if ($this->state === TimerState::Waiting || $this->state === TimerState::Armed) {
            $this->disarm();
            $this->state = $this->state->to(TimerState::Done);
        }
    }

    private function disarm(): void
    {
        if ($this->watcher !== null) {
            Loop::cancel($this->watcher);
            $this->watcher = null;
        }
    }
}
