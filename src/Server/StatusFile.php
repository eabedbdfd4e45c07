<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Server\Internal\ProcessMemory;

/**
 * A small JSON snapshot the supervisor rewrites every second beside the pid file (`kiln status` reads it):
 * supervisor pid, state, listeners, and per worker its pid, state, requests, memory, start time, what it counts
 * (open connections by kind, requests in flight) and how many times its slot's worker was replaced, and the
 * sidecars (the isolated tier's php-cgi processes): how many, and their PSS summed (null: unknown).
 */
final class StatusFile
{
    public function __construct(public readonly string $path) {}

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
            'sidecars' => ['processes' => \count($sidecars), 'pss' => ProcessMemory::pssTotal($sidecars)],
        ];
        $tmp = $this->path . '.' . getmypid() . '.tmp';
        if (@file_put_contents($tmp, json_encode($data, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n") !== false) {
            @rename($tmp, $this->path);
        }
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
