<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The worker generations and their slots: keeps one live worker per slot in the current generation
 * (replacing the dead at once, with backoff for those that die before they begin a first request: a crash
 * in a request is the request's, and its worker is replaced at once, as Apache replaces a child), runs a reload
 * as a pending generation that takes over only once all of it is ready, and retires recycled workers
 * once their replacement serves.
 */
final class Fleet
{
    public int $current = 1;

    public ?int $pending = null;

    private int $lastGeneration = 1;

    /** @var array<int, float> slot => when to fork its replacement */
    private array $spawnAt = [];

    /** @var array<int, int> slot => consecutive deaths before a first request */
    private array $failures = [];

    /** Whether the log said once what a crash under the JIT may mean. */
    private bool $crashExplained = false;

    public function __construct(
        private readonly WorkerPool $pool,
        private readonly int $workers,
        private readonly Log $log,
        private readonly Backoff $backoff = new Backoff(),
    ) {}

    public function startFirstGeneration(): void
    {
        for ($slot = 1; $slot <= $this->workers; $slot++) {
            $this->pool->spawn($slot, $this->current);
        }
    }

    public function isComplete(int $generation): bool
    {
        return \count($this->members($generation, WorkerState::Ready)) === $this->workers;
    }

    /** A worker (of a running server) said ready. */
    public function onReady(WorkerHandle $ready): void
    {
        if ($ready->generation === $this->pending) {
            if ($this->isComplete($this->pending)) {
                $this->finishReload();
            }
            return;
        }
        // A replacement is serving: the worker it replaces may now drain.
        foreach ($this->pool->all() as $handle) {
            if ($handle->slot === $ready->slot && $handle->recycling && $handle->state === WorkerState::Ready) {
                $this->retire($handle);
            }
        }
    }

    /** A worker began its first request: it came up fine. */
    public function onFirstRequest(WorkerHandle $handle): void
    {
        $handle->servedFirst = true;
        $this->failures[$handle->slot] = 0;
    }

    /** A worker of a running server died unasked. */
    public function onUnexpectedExit(WorkerHandle $handle, string $why): void
    {
        if ($handle->generation === $this->pending) {
            $this->abortReload("{$handle->label()} $why");
            return;
        }
        if ($handle->generation !== $this->current) {
            $this->log->debug("{$handle->label()} $why");
            return;
        }
        if ($handle->servedFirst) {
            $this->failures[$handle->slot] = 0;
            $this->log->warning("{$handle->label()} $why; replacing it now" . $this->crashHint($why));
            return;
        }
        $failures = $this->failures[$handle->slot] = ($this->failures[$handle->slot] ?? 0) + 1;
        $this->log->error("{$handle->label()} $why before serving a request; "
            . sprintf('restarting it in %.1f s (failure %d in a row)', $this->backoff->delay($failures), $failures));
    }

    /**
     * A worker killed by SIGSEGV or SIGBUS hit a fault inside PHP (PHP code cannot cause one). With the JIT on,
     * the code the JIT compiled lives in a buffer every worker shares, and a new worker runs the same code: said
     * once, with what to do.
     */
    private function crashHint(string $why): string
    {
        if ($this->crashExplained || preg_match('/\((SIGSEGV|SIGBUS)\)/', $why) !== 1 || !self::jitOn()) {
            return '';
        }
        $this->crashExplained = true;
        return ' (a fault inside PHP: with the JIT on, the code it compiled is shared by every worker and outlives them,'
            . ' so if such crashes repeat, restart the server, or serve with --jit=off)';
    }

    /** Whether PHP's JIT compiles in this process, and so in the workers forked from it. */
    private static function jitOn(): bool
    {
        $status = \function_exists('opcache_get_status') ? @opcache_get_status(false) : false;
        return \is_array($status) && \is_array($status['jit'] ?? null) && ($status['jit']['on'] ?? false) === true;
    }

    /** Every slot has a live, non-recycling worker of the current generation, or one is scheduled. */
    public function keepSlotsServing(float $now): void
    {
        for ($slot = 1; $slot <= $this->workers; $slot++) {
            if ($this->covered($slot)) {
                unset($this->spawnAt[$slot]);
                continue;
            }
            $this->spawnAt[$slot] ??= $now + $this->backoff->delay($this->failures[$slot] ?? 0);
            if ($now >= $this->spawnAt[$slot]) {
                unset($this->spawnAt[$slot]);
                try {
                    $this->pool->spawn($slot, $this->current);
                } catch (ServerException $e) {
                    $this->failures[$slot] = ($this->failures[$slot] ?? 0) + 1;
                    $this->log->error($e->getMessage());
                }
            }
        }
    }

    public function nextSpawnAt(): float
    {
        return $this->spawnAt === [] ? INF : min($this->spawnAt);
    }

    private function covered(int $slot): bool
    {
        foreach ($this->pool->all() as $h) {
            if ($h->slot === $slot && $h->generation === $this->current && $h->isLive() && !$h->recycling) {
                return true;
            }
        }
        return false;
    }

    /** @return list<WorkerHandle> */
    private function members(int $generation, WorkerState $state): array
    {
        return array_values(array_filter(
            $this->pool->all(),
            static fn(WorkerHandle $h): bool => $h->generation === $generation && $h->state === $state,
        ));
    }

    /** A reload started and its new generation is not serving yet (a reload() now would be ignored). */
    public function reloading(): bool
    {
        return $this->pending !== null;
    }

    public function reload(): void
    {
        if ($this->pending !== null) {
            $this->log->warning('reload ignored: a reload is already in progress');
            return;
        }
        $this->pending = ++$this->lastGeneration;
        $this->log->info("reloading: starting generation {$this->pending}");
        for ($slot = 1; $slot <= $this->workers; $slot++) {
            try {
                $this->pool->spawn($slot, $this->pending);
            } catch (ServerException $e) {
                $this->abortReload($e->getMessage());
                return;
            }
        }
    }

    private function finishReload(): void
    {
        \assert($this->pending !== null);
        $old = $this->current;
        $this->current = $this->pending;
        $this->pending = null;
        $this->spawnAt = [];
        foreach ($this->pool->all() as $handle) {
            if ($handle->generation !== $this->current && $handle->isLive()) {
                $this->retire($handle);
            }
        }
        $this->log->info("reloaded: generation {$this->current} serving, generation $old draining");
    }

    private function abortReload(string $why): void
    {
        $this->log->error("reload failed, generation {$this->current} keeps serving: $why");
        foreach ($this->pool->all() as $handle) {
            if ($handle->generation === $this->pending && $handle->isLive()) {
                $this->terminate($handle);
            }
        }
        $this->pending = null;
    }

    /** Graceful: QUIT (a worker still booting has nothing to drain and gets TERM). */
    public function retire(WorkerHandle $handle): void
    {
        if ($handle->state === WorkerState::Booting) {
            $this->terminate($handle);
            return;
        }
        $handle->become(WorkerState::Draining);
        $this->pool->signal($handle, SIGQUIT);
    }

    public function terminate(WorkerHandle $handle): void
    {
        $handle->become(WorkerState::Stopping);
        $this->pool->signal($handle, SIGTERM);
    }

    public function cancelSpawns(): void
    {
        $this->spawnAt = [];
    }
}
