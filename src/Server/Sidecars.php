<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * Processes the supervisor runs for its workers (php-cgi children, for one), each listening on a unix
 * socket the supervisor names in a private directory (mode 0700). A worker asks for a set on its channel
 * (`sidecar-open`); the supervisor forks and execs each member, tells the worker `sidecar-up` once its
 * socket accepts connections, replaces a member the worker is done with (`sidecar-replace`), replaces one
 * that died (at once after a healthy life; with backoff when it died within HEALTHY_AFTER seconds of its
 * start or never listened), and stops a worker's sidecars by pid when that worker exits.
 * A shared spec makes one set for the whole server (owner 0): every worker that asks is told about it,
 * a worker's exit does not end it, and it ends when the server stops and its last worker is gone
 * (docs/design/018-shared-memory-isolated-pool.md). Each sidecar runs in a process group of its own and
 * every signal goes to the group, so what it forked ends with it.
 * Nothing here knows what the processes are. Why the supervisor owns them: docs/design/007-php-cgi-pool.md.
 */
final class Sidecars
{
    public const START_TIMEOUT = 10.0;
    public const STOP_GRACE = 2.0;
    public const HEALTHY_AFTER = 1.0;
    private const PROBE_INTERVAL = 0.005;

    /** @var array<int, SidecarProcess> by pid */
    private array $processes = [];

    /** @var array<string, SidecarSet> by "owner-pid/name" */
    private array $sets = [];

    private ?string $dir = null;

    /**
     * Members of shared sets replaced on a reload, by pid: each ends (SIGTERM, its group) once the workers
     * that used it (array of pid => true) are gone, so that no request in flight to it is cut.
     *
     * @var array<int, array{SidecarProcess, array<int, true>}>
     */
    private array $draining = [];

    private int $sequence = 0;

    private bool $stopping = false;

    /** @var non-empty-list<string>|string|null what starts a batch sidecar (SidecarLauncher::batchPrefix()), or why nothing can; null until asked */
    private array|string|null $batch = null;

    /** @param \Closure(int, Message): void $send tells the worker with that pid */
    public function __construct(
        private readonly Log $log,
        private readonly \Closure $send,
        private readonly Backoff $backoff = new Backoff(),
        private readonly ?StderrRelay $stderr = null,
    ) {}

    /** A worker asks for a set; asking again re-announces the members that are up. */
    public function open(int $owner, SidecarSpec $spec): void
    {
        if ($this->stopping) {
            return;
        }
        $key = $spec->shared ? "0/{$spec->name}" : "$owner/{$spec->name}";
        if (isset($this->sets[$key])) {
            $this->sets[$key]->subscribers[$owner] = true;
            foreach ($this->sets[$key]->members as $process) {
                if ($process->state === SidecarState::Up) {
                    $this->announce($process, $owner);
                }
            }
            foreach ($this->sets[$key]->spawnAt as $index => $at) {
                // A member backing off after failed starts: this worker learns it now, not at the next failure.
                $delay = max(0.001, $at - microtime(true));
                ($this->send)($owner, new Message(Message::SIDECAR_DOWN, "{$spec->name} $index $delay {$spec->name}#$index is restarting after failed starts"));
            }
            return;
        }
        $set = $this->sets[$key] = new SidecarSet(++$this->sequence, $spec->shared ? 0 : $owner, $spec);
        $set->subscribers[$owner] = true;
        $set->program = SidecarLauncher::resolve($spec->command[0], $spec->env['PATH'] ?? (string) getenv('PATH'));
        $this->log->debug("starting {$spec->count} sidecar(s) '{$spec->name}' for worker pid $owner");
        for ($index = 0; $index < $spec->count; $index++) {
            $this->spawn($set, $index);
        }
    }

    /** Ends process $pid, member $index of the worker's set, and starts a fresh one in its place. */
    public function replace(int $owner, string $name, int $index, int $pid, bool $kill, string $reason): void
    {
        $process = ($this->sets["$owner/$name"] ?? $this->sets["0/$name"] ?? null)?->members[$index] ?? null;
        if ($process !== null && $process->set->owner === 0 && !isset($process->set->subscribers[$owner])) {
            return;
        }
        if ($process === null || $process->pid !== $pid || $process->state === SidecarState::Stopping) {
            return; // that process is gone already (and its replacement is not what the worker gave up on)
        }
        $kill ? $this->log->warning("{$process->label()} is killed and replaced: $reason")
            : $this->log->debug("{$process->label()} is replaced: $reason");
        $process->replace = true;
        $this->end($process, $kill ? SIGKILL : SIGTERM);
    }

    /**
     * A reload: every shared set gets fresh members on new sockets (a php-cgi parent's shared memory
     * only grows; a new one starts empty). Workers are told as each is up; the old member ends once the
     * workers that used it are gone (they finish their requests before they exit).
     */
    public function renewShared(): void
    {
        if ($this->stopping) {
            return;
        }
        foreach ($this->sets as $set) {
            if ($set->owner !== 0) {
                continue;
            }
            foreach ($set->members as $index => $old) {
                if ($old->state === SidecarState::Stopping) {
                    continue;
                }
                $this->log->debug("{$old->label()} is replaced for the reload; it ends once its workers are gone");
                $this->draining[$old->pid] = [$old, $set->subscribers];
                unset($set->members[$index]);
                $this->spawn($set, $index);
            }
        }
        $this->endDrained();
    }

    /** Ends the replaced members no worker uses any more. */
    private function endDrained(): void
    {
        foreach ($this->draining as $pid => [$process, $workers]) {
            if ($workers === [] || $this->stopping && $process->state !== SidecarState::Stopping) {
                unset($this->draining[$pid]);
                if ($process->state !== SidecarState::Stopping && $process->state !== SidecarState::Exited) {
                    $this->end($process, SIGTERM);
                }
            }
        }
    }

    /** Its worker exited: every process of its sets ends, and none is replaced. */
    public function ownerGone(int $owner): void
    {
        foreach ($this->draining as $pid => [$process, $workers]) {
            unset($workers[$owner]);
            $this->draining[$pid] = [$process, $workers];
        }
        $this->endDrained();
        foreach ($this->sets as $key => $set) {
            unset($set->subscribers[$owner]);
            if ($set->owner === 0 && $set->subscribers === [] && $this->stopping) {
                $this->endShared($key, $set);
                continue;
            }
            if ($set->owner !== $owner) {
                continue;
            }
            unset($this->sets[$key]);
            foreach ($set->members as $process) {
                $process->replace = false;
                if ($process->state !== SidecarState::Stopping) {
                    $this->end($process, SIGTERM);
                }
            }
        }
    }

    /** The server stops: no more starts; what runs ends with its workers (ownerGone), or by killAll(). */
    public function stopping(): void
    {
        $this->stopping = true;
        foreach ($this->sets as $key => $set) {
            $set->spawnAt = [];
            if ($set->owner === 0 && $set->subscribers === []) {
                $this->endShared($key, $set);
            }
        }
    }

    /** A shared set nobody uses any more while the server stops: its members end, none is replaced. */
    private function endShared(string $key, SidecarSet $set): void
    {
        unset($this->sets[$key]);
        foreach ($set->members as $process) {
            $process->replace = false;
            if ($process->state !== SidecarState::Stopping) {
                $this->end($process, SIGTERM);
            }
        }
    }

    public function killAll(): void
    {
        foreach ($this->processes as $process) {
            self::signal($process->pid, SIGKILL);
        }
    }

    /** @return list<int> pids of every sidecar running now and of the processes each forked (for `kiln status`) */
    public function pids(): array
    {
        $pids = [];
        foreach (array_keys($this->processes) as $pid) {
            $pids[] = $pid;
            array_push($pids, ...Internal\ProcessTree::children($pid));
        }
        return $pids;
    }

    /** Signals the sidecar's process group (it leads one: SidecarLauncher), and the pid itself should it not. */
    private static function signal(int $pid, int $signal): void
    {
        @posix_kill(-$pid, $signal);
        @posix_kill($pid, $signal);
    }

    public function isEmpty(): bool
    {
        return $this->processes === [];
    }

    /** A child was reaped: true when it was a sidecar (and was dealt with). */
    public function reaped(int $pid, int $status): bool
    {
        $process = $this->processes[$pid] ?? null;
        if ($process === null) {
            return false;
        }
        unset($this->processes[$pid], $this->draining[$pid]);
        $this->stderr?->released($pid);
        // What it forked and left behind (php-cgi's children when their parent was killed) ends too.
        @posix_kill(-$pid, SIGKILL);
        SidecarProbe::stop($process);
        $process->become(SidecarState::Exited);
        @unlink($process->socket);
        @unlink($process->socket . '.lock'); // the workers' locks on a shared member (SidecarClient)
        $set = $process->set;
        $how = WorkerPool::describe($status);
        if (($this->sets["{$set->owner}/{$set->spec->name}"] ?? null) !== $set || ($set->members[$process->index] ?? null) !== $process) {
            $this->log->debug("{$process->label()} $how");
            return true;
        }
        unset($set->members[$process->index]);
        if ($this->stopping) {
            $this->log->debug("{$process->label()} $how");
        } elseif ($process->replace) {
            $this->log->debug("{$process->label()} $how; starting its replacement");
            $this->spawn($set, $process->index);
        } elseif ($process->failure === null && $process->upAt !== null && microtime(true) - $process->startedAt >= self::HEALTHY_AFTER) {
            $set->failures[$process->index] = 0;
            $this->log->warning("{$process->label()} $how; replacing it now");
            $this->tell($set, new Message(Message::SIDECAR_DOWN, "{$set->spec->name} {$process->index} 0 $how"));
            $this->spawn($set, $process->index);
        } else {
            $why = $process->failure ?? ($process->upAt === null ? "$how before listening on its socket" : "$how right after its start");
            $this->fail($set, $process->index, "{$process->label()} $why");
        }
        return true;
    }

    /** Probes starting processes, starts members whose backoff is over, kills what lingers. */
    public function tick(float $now): void
    {
        foreach ($this->processes as $process) {
            if ($process->state === SidecarState::Starting) {
                if (SidecarLauncher::listening($process->socket)) {
                    $process->become(SidecarState::Up);
                    $process->upAt = $now;
                    SidecarProbe::start($process, $now);
                    $this->log->debug("{$process->label()} is up on {$process->socket}");
                    $this->announce($process);
                } elseif ($now - $process->startedAt > self::START_TIMEOUT) {
                    $process->failure = \sprintf('did not listen on its socket within %.0f s', self::START_TIMEOUT);
                    $this->end($process, SIGKILL);
                }
            } elseif ($process->state === SidecarState::Up && !SidecarProbe::check($process, $now)) {
                // Alive but of no use (php-cgi's children exit as soon as forked, or it is frozen): it never
                // exits by itself, so it is killed and its replacement started, as for one that died.
                $this->log->error(\sprintf('%s stopped answering: no answer to a probe for %.0f s; killing it and starting a fresh one', $process->label(), $process->set->spec->probeTimeout));
                $process->replace = true;
                $this->end($process, SIGKILL);
            } elseif ($process->state === SidecarState::Stopping && $now >= $process->killAt) {
                self::signal($process->pid, SIGKILL);
                $process->killAt = $now + 1.0;
            }
        }
        foreach ($this->sets as $set) {
            foreach ($set->spawnAt as $index => $at) {
                if ($now >= $at) {
                    unset($set->spawnAt[$index]);
                    $this->spawn($set, $index);
                }
            }
        }
    }

    /** When tick() has something to do next (INF: nothing pending). */
    public function nextWakeAt(): float
    {
        $next = INF;
        foreach ($this->processes as $process) {
            $next = min($next, match ($process->state) {
                SidecarState::Starting => microtime(true) + self::PROBE_INTERVAL,
                SidecarState::Up => SidecarProbe::nextAt($process),
                SidecarState::Stopping => $process->killAt,
                default => INF,
            });
        }
        foreach ($this->sets as $set) {
            $next = min($next, ...array_values($set->spawnAt), ...[INF]);
        }
        return $next;
    }

    /** Removes the socket directories of supervisors that are gone (killed: they could not clean up). */
    private static function sweep(string $tmp): void
    {
        foreach (glob($tmp . '/kiln-*-*', GLOB_ONLYDIR) ?: [] as $dir) {
            if (preg_match('~/kiln-(\d+)-[0-9a-f]{8}$~', $dir, $m) !== 1 || @posix_kill((int) $m[1], 0) || fileowner($dir) !== posix_geteuid()) {
                continue;
            }
            $files = glob($dir . '/*') ?: [];
            if (array_filter($files, static fn(string $file): bool => !str_ends_with($file, '.sock') && !str_ends_with($file, '.sock.lock')) === []) {
                array_map('unlink', $files);
                @rmdir($dir);
            }
        }
    }

    /** Removes the socket directory (call once every sidecar was reaped). */
    public function close(): void
    {
        if ($this->dir !== null) {
            foreach (glob($this->dir . '/*') ?: [] as $file) {
                @unlink($file);
            }
            @rmdir($this->dir);
            $this->dir = null;
        }
    }

    private function spawn(SidecarSet $set, int $index): void
    {
        if ($this->stopping) {
            return;
        }
        $program = $set->program;
        if ($program === null) {
            $this->fail($set, $index, "sidecar '{$set->spec->name}' cannot start: {$set->spec->command[0]} is not an executable file");
            return;
        }
        try {
            $socket = $this->dir() . "/{$set->id}-$index-" . (++$this->sequence) . '.sock';
            $command = $set->spec->commandFor($socket);
            $args = \array_slice($command, 1);
            $run = $program;
            if ($set->spec->batch && ($prefix = $this->batchPrefix()) !== null) {
                [$run, $args] = [$prefix[0], [...\array_slice($prefix, 1), $program, ...$args]]; // chrt sets the policy, then execs it
            }
            $stderr = $this->stderr?->open();
            $pid = SidecarLauncher::start($run, $args, $set->spec->env, $stderr);
        } catch (ServerException $e) {
            if (isset($stderr)) {
                fclose($stderr->reader);
                $stderr->closeWriteEnd();
            }
            $this->fail($set, $index, "sidecar '{$set->spec->name}' cannot start: {$e->getMessage()}");
            return;
        }
        // What it writes to standard error outside a request (php-cgi's start-up warnings) is filed under its name.
        $stderr !== null && $this->stderr?->follow(basename($program), $pid, $stderr);
        $process = new SidecarProcess($set, $index, $pid, $socket, microtime(true));
        $this->processes[$pid] = $set->members[$index] = $process;
    }

    /**
     * The prefix that starts a batch sidecar, found once; null when there is none here, which is logged once: the
     * sidecars then run under this process's own policy, as they would without it. A try that could not be made
     * (no process could be started just then) is made again for the next sidecar.
     *
     * @return non-empty-list<string>|null
     */
    private function batchPrefix(): ?array
    {
        if ($this->batch === null) {
            $this->batch = SidecarLauncher::batchPrefix((string) getenv('PATH'));
            \is_string($this->batch) && $this->log->info("sidecars asked to run as batch jobs run under the server's own scheduling policy: {$this->batch}");
        }
        return \is_array($this->batch) ? $this->batch : null;
    }

    private function fail(SidecarSet $set, int $index, string $why): void
    {
        $failures = $set->failures[$index] = ($set->failures[$index] ?? 0) + 1;
        $delay = $this->backoff->delay($failures);
        $set->spawnAt[$index] = microtime(true) + $delay;
        $this->log->error(\sprintf('%s; restarting it in %.1f s (failure %d in a row)', $why, $delay, $failures));
        $this->tell($set, new Message(Message::SIDECAR_DOWN, "{$set->spec->name} $index $delay $why"));
    }

    /** Tells the set's worker, or every worker that uses a shared set. */
    private function tell(SidecarSet $set, Message $message): void
    {
        foreach (array_keys($set->subscribers) as $worker) {
            ($this->send)($worker, $message);
        }
    }

    /** @param int|null $worker only that worker (it just asked); null: every worker of the set */
    private function announce(SidecarProcess $process, ?int $worker = null): void
    {
        $message = new Message(Message::SIDECAR_UP, "{$process->set->spec->name} {$process->index} {$process->pid} {$process->socket}");
        $worker === null ? $this->tell($process->set, $message) : ($this->send)($worker, $message);
    }

    private function end(SidecarProcess $process, int $signal): void
    {
        SidecarProbe::stop($process);
        $process->become(SidecarState::Stopping);
        $process->killAt = $signal === SIGKILL ? microtime(true) + 1.0 : microtime(true) + self::STOP_GRACE;
        self::signal($process->pid, $signal);
    }

    private function dir(): string
    {
        if ($this->dir === null) {
            self::sweep(rtrim(sys_get_temp_dir(), '/'));
            $dir = rtrim(sys_get_temp_dir(), '/') . '/kiln-' . getmypid() . '-' . bin2hex(random_bytes(4));
            if (!@mkdir($dir, 0700)) {
                throw new ServerException("Cannot create the sidecar socket directory $dir: " . (error_get_last()['message'] ?? 'mkdir failed'));
            }
            @chmod($dir, 0700);
            $this->dir = $dir;
        }
        return $this->dir;
    }
}
