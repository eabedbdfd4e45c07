<?php

declare(strict_types=1);

namespace Kiln\Server\Internal;

use Kiln\Server\Log;
use Kiln\Server\WorkerHandle;
use Kiln\Server\WorkerPool;

/**
 * The supervisor's side of --stall-timeout (docs/design/028): it keeps the workers' heartbeats (StallWatch),
 * and a worker whose event loop stands still is logged and asked for its stack (StallReport::SIGNAL), then
 * killed at twice the timeout; the supervisor reaps and replaces it as any crashed worker.
 *
 * @internal
 */
final class StallGuard
{
    private readonly StallWatch $watch;

    public function __construct(
        private readonly float $timeout,
        private readonly WorkerPool $pool,
        private readonly Log $log,
    ) {
        $this->watch = new StallWatch($timeout);
    }

    /** The worker said it is ready: its loop runs from now. */
    public function ready(WorkerHandle $handle, float $now): void
    {
        $this->watch->watch($handle->pid, $now);
    }

    /** A line came from the worker: its loop turned. */
    public function heard(WorkerHandle $handle, float $now): void
    {
        $stood = $this->watch->heard($handle->pid, $now);
        if ($stood !== null) {
            $handle->stalled = 0.0;
            $this->log->warning(sprintf('%s: its event loop turned again after standing still for %.1f s', $handle->label(), $stood));
        }
    }

    public function gone(WorkerHandle $handle): void
    {
        $this->watch->forget($handle->pid);
    }

    public function tick(float $now): void
    {
        $handles = $this->pool->all();
        foreach ($this->watch->check($now) as [$pid, $verdict, $silent]) {
            $handle = $handles[$pid] ?? null;
            if ($handle === null) {
                continue;
            }
            if ($verdict === StallVerdict::Stalled) {
                $this->log->warning(sprintf('%s: its event loop has stood still for %.1f s (--stall-timeout=%s): a handler is blocking it; '
                    . 'its stack follows if it can answer; it is ended at %s s', $handle->label(), $silent, $this->timeout, 2 * $this->timeout));
                $this->pool->signal($handle, StallReport::SIGNAL);
            } else {
                $this->log->warning(sprintf('%s: its event loop has stood still for %.1f s (twice --stall-timeout=%s): killing it (SIGKILL); '
                    . 'the requests it was handling fail, and it is replaced', $handle->label(), $silent, $this->timeout));
                $handle->stallKilled = true;
                $this->pool->signal($handle, SIGKILL);
            }
        }
        foreach ($handles as $handle) {
            $handle->stalled = $this->watch->stalledFor($handle->pid, $now) ?? 0.0;
        }
    }

    public function nextWakeAt(): float
    {
        return $this->watch->nextCheckAt();
    }
}
