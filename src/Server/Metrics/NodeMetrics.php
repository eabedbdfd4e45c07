<?php

declare(strict_types=1);

namespace Kiln\Server\Metrics;

use Kiln\Kiln;
use Kiln\Server\WorkerHandle;
use Kiln\Server\WorkerState;

/**
 * The node's metrics as the supervisor serves them: its own series (build info, workers by state, restarts by
 * reason), the last export of every live worker, and the counters and histograms of workers that are gone (so a
 * recycle does not make a counter go down). Also what /health and /ready answer.
 */
final class NodeMetrics
{
    private readonly Registry $own;

    private readonly Counter $restarts;

    /** @var array<string, array{type: string, help: string, labels: list<string>, buckets: list<float>, series: array<string, float|array{list<int>, float, int}>}> */
    private array $retired = [];

    /** @var list<\Closure(): ?string> */
    private array $readinessChecks = [];

    public function __construct()
    {
        $this->own = new Registry();
        $this->own->gauge('kiln_build_info', 'Always 1; the labels name the versions', ['version', 'php_version'])
            ->set(1, Kiln::VERSION, PHP_VERSION);
        $this->restarts = $this->own->counter('kiln_worker_restarts_total', 'Workers replaced, by reason (recycle, reload, crash, stall)', ['reason']);
        foreach (['recycle', 'reload', 'crash', 'stall'] as $reason) {
            $this->restarts->inc(0, $reason);
        }
    }

    /**
     * Adds a condition /ready waits for (a Redis server that must be reachable): the check returns null when it
     * holds, or a short reason when it does not. It runs in the supervisor on each /ready request: keep it quick.
     *
     * @param \Closure(): ?string $check
     */
    public function readinessCheck(\Closure $check): void
    {
        $this->readinessChecks[] = $check;
    }

    public function restarted(string $reason): void
    {
        $this->restarts->inc(1, $reason);
    }

    /** A worker is gone: its counters and histograms stay in the node's totals; its gauges go with it. */
    public function retire(WorkerHandle $handle): void
    {
        $kept = array_filter($handle->metrics, static fn(array $family): bool => $family['type'] !== MetricType::Gauge->value);
        $this->retired = Registry::merge([$this->retired, $kept]);
        $handle->metrics = [];
    }

    /** @param array<int, WorkerHandle> $workers */
    public function render(array $workers): string
    {
        $states = $this->own->gauge('kiln_workers', 'Worker processes, by state', ['state']);
        foreach (WorkerState::cases() as $state) {
            $states->set(0, $state->value);
        }
        $exports = [$this->retired];
        foreach ($workers as $worker) {
            $states->add(1, $worker->state->value);
            $exports[] = $worker->metrics;
        }
        $exports[] = $this->own->export();
        return PrometheusText::render(Registry::merge($exports));
    }

    /** @param array<int, WorkerHandle> $workers */
    public function health(bool $running, array $workers): ?string
    {
        if (!$running) {
            return 'the server is not running';
        }
        foreach ($workers as $worker) {
            if ($worker->state === WorkerState::Ready) {
                return null;
            }
        }
        return 'no worker is serving';
    }

    /** @param array<int, WorkerHandle> $workers */
    public function readiness(bool $running, int $slots, array $workers): ?string
    {
        if (!$running) {
            return 'the server is not running (starting, draining or stopping)';
        }
        $ready = \count(array_filter($workers, static fn(WorkerHandle $w): bool => $w->state === WorkerState::Ready));
        if ($ready < $slots) {
            return "$ready of $slots workers are serving";
        }
        foreach ($workers as $worker) {
            // With --redis each worker reports whether Redis answered it (kiln_redis_up): a node that cannot reach
            // the state it shares with the others is not ready.
            $up = $worker->metrics['kiln_redis_up']['series'] ?? [];
            foreach ($up as $value) {
                if ($value === 0.0 || $value === 0) {
                    return "Redis is unreachable from worker pid {$worker->pid}";
                }
            }
        }
        foreach ($this->readinessChecks as $check) {
            if (($reason = $check()) !== null) {
                return $reason;
            }
        }
        return null;
    }
}
