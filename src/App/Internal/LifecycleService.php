<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\WorkerInfo;
use Kiln\Server\InFlight;
use Kiln\Server\Service;
use Kiln\Server\WorkerContext;
use Kiln\Store\NodeState;

/**
 * @internal
 *
 * The worker's service with the app's timers and hooks around it: start hooks and timers once it serves;
 * on a drain (recycle, reload, QUIT) the timers end at once and the stop hooks run when the drain is over;
 * on a stop (TERM) they run before the connections close (up to their first wait: the worker ends next).
 */
final class LifecycleService implements Service, InFlight
{
    private ?WorkerInfo $worker = null;

    public function __construct(
        private readonly Service $inner,
        private readonly Schedule $schedule,
    ) {}

    public function start(array $listeners, WorkerContext $context): void
    {
        $this->inner->start($listeners, $context);
        $this->worker = new WorkerInfo($context->workerId(), getmypid() ?: 0);
        $this->schedule->start(
            $this->worker,
            static fn(string $message) => $context->log('error', $message),
            static fn() => NodeState::get(),
        );
    }

    public function inFlight(): array
    {
        return $this->inner instanceof InFlight ? $this->inner->inFlight() : [];
    }

    public function drain(\Closure $done): void
    {
        $worker = $this->worker;
        if ($worker === null) {
            $this->inner->drain($done);
            return;
        }
        $this->schedule->halt();
        $this->inner->drain(fn() => $this->schedule->stop($worker, $done));
    }

    public function windDown(): void
    {
        $this->inner->windDown();
    }

    public function stop(): void
    {
        if ($this->worker !== null) {
            $this->schedule->stop($this->worker, static function (): void {});
        }
        $this->inner->stop();
    }
}
