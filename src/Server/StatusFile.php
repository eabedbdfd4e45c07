<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Server\Internal\ProcessMemory;

/**
 * A small JSON snapshot the supervisor rewrites every second beside the pid file (`kiln status` reads it):
 * supervisor pid, state, listeners, and per worker its pid, state, requests, memory, start time, what it counts
 * (open connections by kind, requests in flight) and how many times its slot's worker was replaced, and the
 * sidecars (the isolated tier's php-cgi processes): how many, and their PSS summed (null: unknown).
 *
 * The PSS is measured at most every PSS_EVERY seconds, and at once when the set of sidecars changes: the kernel
 * walks each process's page tables to answer, and for a pool of WordPress children that took 2 ms (a few percent
 * of the front's CPU under load, when done every second).
 */
final class StatusFile
{
    public const PSS_EVERY = 10.0;

    /** @var array{list<int>, ?int, float}|null the sidecars last measured, their PSS, and when */
    private ?array $pss = null;

    /** @param ?\Closure(): float $clock seconds (tests pass a fake); null: microtime(true) */
    public function __construct(
        public readonly string $path,
        private readonly ?\Closure $clock = null,
    ) {}

    public static function besidePidFile(string $pidFile): self
    {
        return new self((string) preg_replace('/\.pid$/', '', $pidFile) . '.status.json');
    }

    /**
     * @param array<int, WorkerHandle> $workers
     * @param list<ListenAddress> $listen
     * @param array<int, int> $restarts workers replaced so far, by slot
     * @param list<int> $sidecars pids of the sidecars running now
     */
    public function write(SupervisorState $state, array $workers, array $listen, array $restarts = [], array $sidecars = []): void
    {
        $data = [
            'pid' => getmypid(),
            'state' => $state->value,
            'listen' => array_map(static fn(ListenAddress $a): string => $a->url(), $listen),
            'updated' => microtime(true),
            'workers' => array_values(array_map(static fn(WorkerHandle $w): array => $w->status() + ['restarts' => $restarts[$w->slot] ?? 0], $workers)),
            'sidecars' => ['processes' => \count($sidecars), 'pss' => $this->sidecarPss($sidecars)],
        ];
        $tmp = $this->path . '.' . getmypid() . '.tmp';
        if (@file_put_contents($tmp, json_encode($data, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n") !== false) {
            @rename($tmp, $this->path);
        }
    }

    /** @param list<int> $sidecars */
    private function sidecarPss(array $sidecars): ?int
    {
        $now = $this->clock === null ? microtime(true) : ($this->clock)();
        if ($this->pss !== null && $this->pss[0] === $sidecars && $now >= $this->pss[2] && $now - $this->pss[2] < self::PSS_EVERY) {
            return $this->pss[1];
        }
        $pss = ProcessMemory::pssTotal($sidecars);
        $this->pss = [$sidecars, $pss, $now];
        return $pss;
    }

    /** @return array<string, mixed>|null */
    public function read(): ?array
    {
        $text = @file_get_contents($this->path);
        if ($text === false) {
            return null;
        }
        $data = json_decode($text, true);
        if (!\is_array($data)) {
            return null;
        }
        /** @var array<string, mixed> $data */
        return $data;
    }

    public function remove(): void
    {
        @unlink($this->path);
    }
}
