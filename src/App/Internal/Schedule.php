<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\Timer;
use Kiln\App\WorkerInfo;
use Kiln\Loop\Loop;
use Kiln\Store\Lease;
use Kiln\Store\SharedState;

/**
 * @internal
 *
 * An app's timers and worker hooks, run by its worker (LifecycleService): start hooks once the worker
 * serves, then the timers; on drain or stop the timers end, node-wide leases are given up, and the stop
 * hooks run. A timer or hook that throws is logged; the worker carries on.
 *
 * Node-wide timers: every worker keeps one lease per timer name in the node's shared state (Lease, 3 s,
 * renewed each second); only the holder fires. A holder that dies stops renewing and another worker takes
 * the lease within about five seconds; one that stops in order gives it up at once (docs/design/023).
 */
final class Schedule
{
    public const LEASE_SECONDS = 3;
    public const RENEW_EVERY = 1.0;

    /** @var list<Timer> */
    private array $timers = [];

    /** @var list<\Closure(WorkerInfo): mixed> */
    private array $startHooks = [];

    /** @var list<\Closure(WorkerInfo): mixed> */
    private array $stopHooks = [];

    /** @var array<string, Lease> by node-wide timer name */
    private array $leases = [];

    /** @var array<string, bool> node-wide timer name => this worker holds its lease */
    private array $held = [];

    private ?WorkerInfo $worker = null;

    private ?string $keeper = null;

    private bool $stopped = false;

    private bool $stopHooksRan = false;

    /** @var \Closure(string): void */
    private \Closure $log;

    private ?SharedState $state = null;

    /** @var (\Closure(): SharedState)|null */
    private ?\Closure $stateSource = null;

    public function __construct()
    {
        $this->log = static function (string $message): void {
            error_log($message);
        };
    }

    public function add(Timer $timer): Timer
    {
        if ($timer->node !== null) {
            foreach ($this->timers as $other) {
                if ($other->node === $timer->node && !$other->isCancelled()) {
                    throw new \ValueError("A node-wide timer named '{$timer->node}' is already registered");
                }
            }
        }
        $this->timers[] = $timer;
        if ($this->worker !== null && !$this->stopped) {
            $this->arm($timer);
        }
        return $timer;
    }

    /** @param \Closure(WorkerInfo): mixed $hook */
    public function onStart(\Closure $hook): void
    {
        $this->startHooks[] = $hook;
    }

    /** @param \Closure(WorkerInfo): mixed $hook */
    public function onStop(\Closure $hook): void
    {
        $this->stopHooks[] = $hook;
    }

    public function isEmpty(): bool
    {
        return $this->timers === [] && $this->startHooks === [] && $this->stopHooks === [];
    }

    /**
     * The worker serves: start hooks, then the timers (in a Fiber, once the loop runs).
     *
     * @param \Closure(string): void $log an error line for the worker's log
     * @param \Closure(): SharedState $state the node's shared state, asked for only when a node-wide timer needs it
     */
    public function start(WorkerInfo $worker, \Closure $log, \Closure $state): void
    {
        $this->log = $log;
        $this->stateSource = $state;
        Loop::defer(fn() => Loop::async(function () use ($worker): void {
            $this->runHooks($this->startHooks, $worker, 'onWorkerStart');
            if ($this->stopped) {
                return;
            }
            $this->worker = $worker;
            foreach ($this->timers as $timer) {
                $this->arm($timer);
            }
        }));
    }

    /** The worker begins to drain or stop: timers fire no more, node-wide leases go to the other workers. */
    public function halt(): void
    {
        $this->stopped = true;
        foreach ($this->timers as $timer) {
            $timer->stop();
        }
        if ($this->keeper !== null) {
            Loop::cancel($this->keeper);
            $this->keeper = null;
        }
        foreach ($this->leases as $name => $lease) {
            if ($this->held[$name] ?? false) {
                $this->guard(static fn() => $lease->release(), "releasing the node-wide timer '$name'");
            }
        }
        $this->held = [];
    }

    /**
     * The worker is done (drained, recycled, reloaded or told to stop): halt(), then the stop hooks; $done
     * is called once they returned. A second call only calls $done.
     *
     * @param \Closure(): void $done
     */
    public function stop(WorkerInfo $worker, \Closure $done): void
    {
        if ($this->stopHooksRan) {
            $done();
            return;
        }
        $this->stopHooksRan = true;
        $this->halt();
        Loop::async(function () use ($worker, $done): void {
            $this->runHooks($this->stopHooks, $worker, 'onWorkerStop');
            $done();
        });
    }

    private function arm(Timer $timer): void
    {
        $node = $timer->node;
        $what = ($timer->repeat ? 'every' : 'after') . " {$timer->seconds} s" . ($node === null ? '' : " (node-wide '$node')");
        $failed = fn(\Throwable $e) => $this->report("timer $what", $e);
        if ($node === null) {
            $timer->arm(static fn(): bool => true, $failed);
            return;
        }
        $worker = $this->worker;
        \assert($this->stateSource !== null && $worker !== null);
        $this->state ??= ($this->stateSource)();
        $this->leases[$node] = new Lease($this->state, "timer.$node", (string) $worker->pid, self::LEASE_SECONDS);
        $this->renew();
        $this->keeper ??= Loop::repeat(self::RENEW_EVERY, $this->renew(...));
        Loop::unreference($this->keeper);
        $state = $this->state;
        \assert($state !== null);
        $pid = $worker->pid;
        $timer->arm(function () use ($node, $timer, $state, $pid): bool {
            if (!($this->held[$node] ?? false) || $timer->isCancelled()) {
                return false;
            }
            if ($timer->repeat) {
                return true;
            }
            // Once per node: the first holder to get here marks it run; a later holder (a replacement) finds the mark.
            $first = $state->update("timer.$node.ran", static fn(?array $ran): array => $ran ?? ['pid' => $pid], 0);
            return ($first['pid'] ?? null) === $pid;
        }, $failed);
    }

    /** Takes or renews every node-wide lease this worker wants. */
    private function renew(): void
    {
        foreach ($this->leases as $name => $lease) {
            $this->held[$name] = $this->guard(static fn(): bool => $lease->acquire(), "the lease of node-wide timer '$name'") === true;
        }
    }

    /** @param list<\Closure(WorkerInfo): mixed> $hooks */
    private function runHooks(array $hooks, WorkerInfo $worker, string $kind): void
    {
        foreach ($hooks as $hook) {
            try {
                $hook($worker);
            } catch (\Throwable $e) {
                $this->report($kind, $e);
            }
        }
    }

    private function guard(\Closure $fn, string $what): mixed
    {
        try {
            return $fn();
        } catch (\Throwable $e) {
            $this->report($what, $e);
            return null;
        }
    }

    private function report(string $what, \Throwable $e): void
    {
        ($this->log)("$what failed: " . $e::class . ': ' . $e->getMessage() . ' at ' . $e->getFile() . ':' . $e->getLine());
    }
}
