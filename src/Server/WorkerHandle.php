<?php

declare(strict_types=1);

namespace Kiln\Server;

/** The supervisor's record of one worker process. */
final class WorkerHandle
{
    public WorkerState $state = WorkerState::Booting;

    public string $buffer = '';

    /** Lines for the worker its channel did not take yet. */
    public string $outbox = '';

    public bool $servedFirst = false;

    /** The worker asked to be replaced (max requests / memory); it drains once its replacement is ready. */
    public bool $recycling = false;

    public int $requests = 0;

    public int $memory = 0;

    /** @var array<string, int> what the worker counts (`websocket` connections), as it last reported */
    public array $counts = [];

    /** @var array<string, array{type: string, help: string, labels: list<string>, buckets: list<float>, series: array<string, float|array{list<int>, float, int}>}> its last metrics export (see Metrics\NodeMetrics) */
    public array $metrics = [];

    public ?string $bootFailure = null;

    /** Seconds its event loop has stood still, once past --stall-timeout; 0: it turns. */
    public float $stalled = 0.0;

    /** It was killed for standing still past twice --stall-timeout. */
    public bool $stallKilled = false;

    /** USR1 came while it booted (before it watches USR1): it still holds the log files of its fork; reopen once ready. */
    public bool $reopenWhenReady = false;

    /** The read end of the worker's standard error (StderrRelay); null without FFI. */
    public ?StderrSource $stderr = null;

    /** @param resource|null $channel */
    public function __construct(
        public readonly int $slot,
        public readonly int $generation,
        public readonly int $pid,
        public mixed $channel,
        public readonly float $startedAt,
    ) {}

    public function become(WorkerState $next): void
    {
        $this->state = $this->state->to($next);
    }

    /** Booting or serving: neither told to stop nor gone. */
    public function isLive(): bool
    {
        return $this->state === WorkerState::Booting || $this->state === WorkerState::Ready;
    }

    public function closeChannel(): void
    {
        if (\is_resource($this->channel)) {
            fclose($this->channel);
        }
        $this->channel = null;
    }

    public function closeStderr(): void
    {
        $this->stderr?->close();
        $this->stderr = null;
    }

    public function label(): string
    {
        return "worker {$this->slot} (pid {$this->pid})";
    }

    /** @return array<string, int|float|string|bool> */
    public function status(): array
    {
        return [
            'id' => $this->slot,
            'pid' => $this->pid,
            'generation' => $this->generation,
            'state' => $this->state->value,
            'requests' => $this->requests,
            'memory' => $this->memory,
            'started' => $this->startedAt,
            'stalled' => round($this->stalled, 1),
            ...$this->counts,
        ];
    }
}
