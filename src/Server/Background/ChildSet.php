<?php

declare(strict_types=1);

namespace Kiln\Server\Background;

use Kiln\Server\Backoff;
use Kiln\Server\Log;
use Kiln\Server\StderrRelay;
use Kiln\Server\WorkerPool;

/**
 * @internal
 *
 * Processes the supervisor forks and keeps running, each under a key (`task 2`, `process mailer`): one that
 * exits is started again, at once after a healthy life (or, with $recycles, after exiting with code 0 on
 * purpose), with backoff when it keeps dying young. restart() ends one so that a fresh one takes its place;
 * drop() ends one for good; stopAll() ends them all with the server. With a StderrRelay, what each writes to its
 * standard error is filed in the error log under its key and pid, as a worker's is.
 */
final class ChildSet
{
    public const HEALTHY_AFTER = 1.0;
    public const STOP_GRACE = 3.0;

    /** @var array<string, array{\Closure(): int, bool}> key => what the child runs, whether exit 0 is a recycle */
    private array $wanted = [];

    /** @var array<int, string> pid => key */
    private array $keys = [];

    /** @var array<string, int> key => pid of its live process */
    private array $pids = [];

    /** @var array<int, float> pid => when it started */
    private array $startedAt = [];

    /** @var array<string, int> key => deaths in a row before HEALTHY_AFTER */
    private array $failures = [];

    /** @var array<string, float> key => when to start it again */
    private array $spawnAt = [];

    /** @var array<int, float> pid => when to SIGKILL it (it was told to end) */
    private array $killAt = [];

    private bool $stopping = false;

    /** The server is stopping: what exits now is not started again (what runs is stopped later, by stopAll()). */
    private bool $frozen = false;

    /** @var array<string, int> key => times it ended unasked and was started again */
    private array $restarts = [];

    /**
     * @param \Closure(): void $inChild runs first in each child: lets go of what belongs to the supervisor
     * @param ?StderrRelay $stderr files what the children write to their standard error (null: they keep the server's)
     */
    public function __construct(
        private readonly Log $log,
        private readonly \Closure $inChild,
        private readonly Backoff $backoff = new Backoff(0.5, 30.0),
        private readonly ?StderrRelay $stderr = null,
    ) {}

    /**
     * Starts a process under $key and keeps one running until drop() or stopAll().
     *
     * @param \Closure(): int $main runs in the child; returns its exit code
     */
    public function keep(string $key, \Closure $main, bool $recycles = false): void
    {
        $this->wanted[$key] = [$main, $recycles];
        if (!isset($this->pids[$key])) {
            unset($this->spawnAt[$key]); // started now: a pending start after a crash's backoff would be a second one
            $this->spawn($key);
        }
    }

    /** Ends its process with $signal (SIGKILL after $grace seconds); a fresh one starts when it has exited. */
    public function restart(string $key, int $signal, float $grace = self::STOP_GRACE): void
    {
        $pid = $this->pids[$key] ?? null;
        if ($pid !== null) {
            $this->failures[$key] = 0;
            $this->end($pid, $signal, $grace);
        }
    }

    /** Ends its process (TERM) and starts no other. */
    public function drop(string $key): void
    {
        unset($this->wanted[$key], $this->spawnAt[$key], $this->failures[$key]);
        $pid = $this->pids[$key] ?? null;
        if ($pid !== null) {
            $this->end($pid, SIGTERM);
        }
    }

    /** @return list<string> */
    public function keys(): array
    {
        return array_keys($this->wanted);
    }

    public function pid(string $key): ?int
    {
        return $this->pids[$key] ?? null;
    }

    /** No process starts again from now on; the running ones keep running until stopAll(). */
    public function freeze(): void
    {
        $this->frozen = true;
        $this->spawnAt = [];
    }

    /** @return array<string, int> key => times its process ended unasked (crashed, killed, exited) and was started again */
    public function restarts(): array
    {
        return $this->restarts;
    }

    public function stopAll(): void
    {
        if ($this->stopping) {
            return;
        }
        $this->stopping = true;
        $this->spawnAt = [];
        foreach ($this->keys as $pid => $_) {
            $this->end($pid, SIGTERM);
        }
    }

    public function killAll(): void
    {
        foreach ($this->keys as $pid => $_) {
            @posix_kill($pid, SIGKILL);
        }
    }

    public function isEmpty(): bool
    {
        return $this->keys === [];
    }

    /** A child was reaped: true when it was one of these (and was dealt with). */
    public function reaped(int $pid, int $status): bool
    {
        $key = $this->keys[$pid] ?? null;
        if ($key === null) {
            return false;
        }
        $lived = microtime(true) - $this->startedAt[$pid];
        $told = isset($this->killAt[$pid]);
        unset($this->keys[$pid], $this->startedAt[$pid], $this->killAt[$pid]);
        $this->stderr?->released($pid);
        if (($this->pids[$key] ?? null) === $pid) {
            unset($this->pids[$key]);
        }
        $how = WorkerPool::describe($status);
        $wanted = $this->wanted[$key] ?? null;
        if ($this->stopping || $this->frozen || $wanted === null) {
            $this->log->debug("$key (pid $pid) $how");
            return true;
        }
        if (!$told) {
            $this->restarts[$key] = ($this->restarts[$key] ?? 0) + 1;
        }
        $recycled = $wanted[1] && pcntl_wifexited($status) && pcntl_wexitstatus($status) === 0;
        if ($told || $recycled || $lived >= self::HEALTHY_AFTER) {
            $this->failures[$key] = 0;
            $told || $recycled ? $this->log->debug("$key (pid $pid) $how; starting a fresh one")
                : $this->log->warning("$key (pid $pid) $how; starting it again");
            $this->spawn($key);
            return true;
        }
        $failures = $this->failures[$key] = ($this->failures[$key] ?? 0) + 1;
        $delay = $this->backoff->delay($failures);
        $this->spawnAt[$key] = microtime(true) + $delay;
        $this->log->error(\sprintf('%s (pid %d) %s right after its start; starting it again in %.1f s (failure %d in a row)', $key, $pid, $how, $delay, $failures));
        return true;
    }

    public function tick(float $now): void
    {
        foreach ($this->spawnAt as $key => $at) {
            if ($now >= $at) {
                unset($this->spawnAt[$key]);
                $this->spawn($key);
            }
        }
        foreach ($this->killAt as $pid => $at) {
            if ($now >= $at) {
                @posix_kill($pid, SIGKILL);
                $this->killAt[$pid] = $now + 1.0;
            }
        }
    }

    public function nextWakeAt(): float
    {
        $times = [...array_values($this->spawnAt), ...array_values($this->killAt)];
        return $times === [] ? INF : min($times);
    }

    private function spawn(string $key): void
    {
        $wanted = $this->wanted[$key] ?? null;
        if ($this->stopping || $this->frozen || $wanted === null || isset($this->pids[$key])) {
            return;
        }
        $stderr = $this->stderr?->open();
        $pid = pcntl_fork();
        if ($pid === -1) {
            if ($stderr !== null) {
                fclose($stderr->reader);
                $stderr->closeWriteEnd();
            }
            $this->failures[$key] = ($this->failures[$key] ?? 0) + 1;
            $this->spawnAt[$key] = microtime(true) + $this->backoff->delay($this->failures[$key]);
            $this->log->error("cannot fork $key: " . pcntl_strerror(pcntl_get_last_error()));
            return;
        }
        if ($pid === 0) {
            ($this->inChild)();
            if ($stderr !== null) {
                $this->stderr?->adopt($stderr);
            }
            $this->log->identify($key);
            @cli_set_process_title("kiln: $key");
            $code = 1;
            try {
                $code = ($wanted[0])();
            } catch (\Throwable $e) {
                $this->log->error("$key failed: " . $e::class . ': ' . $e->getMessage() . ' at ' . $e->getFile() . ':' . $e->getLine());
            }
            exit($code);
        }
        if ($stderr !== null) {
            $this->stderr?->follow($key, $pid, $stderr);
        }
        $this->keys[$pid] = $key;
        $this->pids[$key] = $pid;
        $this->startedAt[$pid] = microtime(true);
    }

    private function end(int $pid, int $signal, float $grace = self::STOP_GRACE): void
    {
        $this->killAt[$pid] ??= microtime(true) + $grace;
        @posix_kill($pid, $signal);
    }
}
