<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Loop\StreamPoll;
use Kiln\Server\Background\BackgroundProcesses;
use Kiln\Server\Internal\AdoptedProcesses;
use Kiln\Server\Internal\ProcessControl;

/**
 * The master process: forks the workers, keeps one serving per slot, reloads and stops them, and relays
 * the node bus between them (BusRelay: each worker's bus socket is read in the same select as its channel).
 *
 * It runs its own small loop (signals recorded by SignalInbox, stream_select on the worker channels,
 * waitpid(WNOHANG)) rather than the Kiln event loop: it needs nothing but those three, and a loop
 * driver created here would be inherited by every fork (an epoll descriptor shared across processes).
 */
final class Supervisor
{
    private const STOP_GRACE = 3.0;

    private SupervisorState $state = SupervisorState::Starting;

    private WorkerPool $pool;

    private StderrRelay $stderr;

    private Fleet $fleet;

    private Sidecars $sidecars;

    private SignalInbox $signals;

    private float $killAt = INF;

    private float $statusAt = 0.0;

    private ?string $startupError = null;

    /** @var array<int, int> workers replaced while running, by slot (kiln status) */
    private array $restarts = [];

    private string $driver = '';

    /** This process's pid, as its children are told it (set by run()). */
    private int $pid = 0;

    /** reloadWhen asked for a reload not made yet. */
    private bool $reloadAsked = false;

    /** Connections per worker, shared with the workers so one listening socket's connections spread evenly. */
    private readonly ?AcceptBalance $balance;

    /** null: no --admin-listen */
    private readonly ?Metrics\NodeMetrics $metrics;

    /** null: --stall-timeout=0 */
    private readonly ?Internal\StallGuard $stalls;

    /**
     * @param \Closure(): Service $factory builds the service inside each worker
     * @param list<LogFile> $logFiles reopened on USR1 (in the supervisor and the workers)
     * @param ?\Closure(): void $onReady called once the first generation serves
     * @param ?BackgroundProcesses $background task workers and user processes, started before the workers
     * @param ?\Closure(float): bool $reloadWhen asked on every turn of the loop while serving (with the time): true
     *        reloads the workers as SIGHUP does (`kiln serve --watch`)
     * @param ?\Closure(float, bool): void $freshCode keeps the opcache this process shares with the processes it
     *        forks true to the files on disk: called on every turn with the time and false (it checks when due),
     *        and with true before a reload starts new workers (it checks at once)
     */
    public function __construct(
        private readonly Config $config,
        private readonly Listeners $listeners,
        private readonly Log $log,
        private readonly \Closure $factory,
        private readonly array $logFiles = [],
        private readonly ?StatusFile $status = null,
        private readonly ?\Closure $onReady = null,
        private readonly ?BackgroundProcesses $background = null,
        private readonly ?\Closure $reloadWhen = null,
        private readonly ?Metrics\AdminServer $admin = null,
        private readonly ?PidFile $pidFile = null,
        private readonly ?\Closure $freshCode = null,
    ) {
        $this->metrics = $admin === null ? null : new Metrics\NodeMetrics();
        $this->signals = new SignalInbox();
        $this->stderr = new StderrRelay($log);
        $this->pool = new WorkerPool($this->workerMain(...), new BusRelay($log), $this->stderr);
        $this->fleet = new Fleet($this->pool, $config->workers, $log);
        $this->sidecars = new Sidecars($log, $this->pool->send(...), stderr: $this->stderr);
        $this->balance = $config->listenerMode === ListenerMode::Shared ? AcceptBalance::create($config->workers) : null;
        $this->stalls = $config->stallTimeout > 0 ? new Internal\StallGuard($config->stallTimeout, $this->pool, $log) : null;
    }

    /** @return int exit code (0); throws ServerException when the first generation cannot start */
    public function run(): int
    {
        $this->signals->install();
        @cli_set_process_title(PidFile::SUPERVISOR_TITLE);
        $this->pid = posix_getpid();
        // Orphans below the server (php-cgi children whose parent was killed, a fork server's children) come back
        // here rather than to PID 1, and reap() reaps them: a container's init may not (docs/design/029).
        if ($this->pid === 1) {
            $this->log->debug('running as PID 1: every orphan in the container is reaped here');
        } elseif (ProcessControl::childSubreaper()) {
            $this->log->debug('child subreaper: orphans of the server\'s processes are reaped here');
        } else {
            $this->log->debug('no FFI: orphans of the server\'s processes go to PID 1, which must reap them');
        }
        if (!StreamPoll::isUnbounded() && $this->config->workers * 3 > 900) {
            $this->log->warning("no FFI: the supervisor watches its workers with stream_select(), which fails for descriptors numbered 1024 or more, and --workers={$this->config->workers} may reach them (three a worker)");
        }
        if (!StderrRelay::supported()) {
            $this->log->debug('no FFI: what workers, task workers and user processes write to standard error (PHP\'s own messages) goes there as PHP wrote it, not through the error log');
        }
        try {
            $this->background?->start($this->forgetInChild(...), $this->stderr);
        } catch (ServerException $e) {
            $this->signals->uninstall();
            $this->listeners->close();
            throw $e;
        }
        if ($this->admin !== null) {
            $this->log->info("admin listener on {$this->admin->bound()->url()} (/metrics, /health, /ready)");
        }
        $this->fleet->startFirstGeneration();
        while ($this->state !== SupervisorState::Stopped) {
            $this->tick();
        }
        $this->signals->uninstall();
        $this->sidecars->close();
        $this->background?->close();
        $this->admin?->close();
        $this->listeners->close();
        $this->status?->remove();
        // Orphans adopted here that still run (docs/deploy.md): SIGTERM, a short grace, then SIGKILL; all reaped.
        AdoptedProcesses::end($this->pid, $this->log);
        if ($this->startupError !== null) {
            throw new ServerException($this->startupError);
        }
        return 0;
    }

    private function tick(): void
    {
        foreach ($this->signals->take() as $signal) {
            $this->onSignal($signal);
        }
        $ready = [];
        $extra = [...$this->admin?->streams() ?? [], ...$this->background?->streams() ?? []];
        foreach ($this->pool->read($this->timeout(), $extra, $ready) as [$handle, $message]) {
            $this->onMessage($handle, $message);
        }
        // A signal that cut the wait short is acted on before the exits it may have caused are seen: a TERM sent
        // to the whole process group (a terminal, systemd) ends the children too, and none must be started again.
        foreach ($this->signals->take() as $signal) {
            $this->onSignal($signal);
        }
        foreach ($ready as $key) {
            $key === 'inspect' ? $this->background?->onReadable($key) : $this->admin?->onReadable($key, $this->answerAdmin(...));
        }
        $others = fn(int $pid, int $status): bool => $this->sidecars->reaped($pid, $status) || ($this->background?->reaped($pid, $status) ?? false);
        foreach ($this->pool->reap($others) as [$handle, $how, $clean]) {
            foreach ($this->pool->flush($handle) as [, $message]) {
                $this->onMessage($handle, $message);
            }
            $handle->closeChannel();
            $this->stalls?->gone($handle);
            $this->sidecars->ownerGone($handle->pid);
            $this->onExit($handle, $how, $clean);
        }
        $now = microtime(true);
        $this->stalls?->tick($now);
        $this->freshCode?->__invoke($now, false);
        if ($this->state === SupervisorState::Running) {
            $this->fleet->keepSlotsServing($now);
            // A change seen while a reload is under way waits for it: the generation starting may have read the old file.
            if ($this->reloadWhen !== null && ($this->reloadWhen)($now)) {
                $this->reloadAsked = true;
            }
            if ($this->reloadAsked && !$this->fleet->reloading()) {
                $this->reloadAsked = false;
                $this->reload();
            }
        }
        $this->sidecars->tick($now);
        $this->background?->tick($now);
        $this->admin?->tick($now);
        $this->pool->flushOutboxes();
        if ($now >= $this->killAt) {
            foreach ($this->pool->all() as $handle) {
                $this->log->warning("{$handle->label()} did not exit in time: killing it");
                $this->pool->signal($handle, SIGKILL);
            }
            if ($this->pool->isEmpty()) {
                $this->sidecars->killAll();
                $this->background?->killAll();
            }
            $this->killAt = $now + 1.0;
        }
        $stopping = $this->state === SupervisorState::Stopping || $this->state === SupervisorState::Draining;
        if ($stopping && $this->pool->isEmpty()) {
            $this->background?->stopping(); // after the workers: a drain's last requests may still run tasks
        }
        if ($stopping && $this->pool->isEmpty() && $this->sidecars->isEmpty() && ($this->background?->isEmpty() ?? true)) {
            if ($this->state === SupervisorState::Draining) {
                $this->become(SupervisorState::Stopping);
            }
            $this->become(SupervisorState::Stopped);
            // A failed start is reported once, by the command line, as one line.
            $this->startupError === null ? $this->log->info('stopped') : $this->log->debug('start-up failed: stopped');
        } elseif ($this->status !== null && $now >= $this->statusAt) {
            $this->statusAt = $now + 1.0;
            $this->status->write($this->state, $this->pool->all(), $this->listeners->bound(), $this->restarts, $this->sidecars->pids());
        }
    }

    private function timeout(): float
    {
        $next = min(microtime(true) + 0.5, $this->killAt, $this->statusAt + 1.0, $this->fleet->nextSpawnAt(), $this->sidecars->nextWakeAt(), $this->background?->nextWakeAt() ?? INF, $this->stalls?->nextWakeAt() ?? INF);
        return max(0.0, min(0.5, $next - microtime(true)));
    }

    private function onSignal(int $signal): void
    {
        match ($signal) {
            SIGTERM, SIGINT => $this->stop($signal === SIGINT ? 'SIGINT' : 'SIGTERM'),
            SIGQUIT => $this->drain(),
            SIGHUP => $this->reload(),
            SIGUSR1 => $this->reopenLogs(),
            SIGUSR2, SIGALRM => $this->log->warning(($signal === SIGUSR2 ? 'SIGUSR2' : 'SIGALRM') . ' ignored: Kiln acts on SIGTERM and SIGINT (stop),'
                . ' SIGQUIT (drain and stop), SIGHUP (reload: kiln reload) and SIGUSR1 (reopen the log files); nginx\'s and php-fpm\'s USR2 has no Kiln meaning'),
            default => null, // SIGCHLD only wakes the loop; reap() does the rest.
        };
    }

    private function onMessage(WorkerHandle $handle, Message $message): void
    {
        $this->stalls?->heard($handle, microtime(true));
        switch ($message->type) {
            case Message::READY:
                $this->driver = $message->argument;
                $this->stalls?->ready($handle, microtime(true));
                if ($handle->state === WorkerState::Booting) {
                    $handle->become(WorkerState::Ready);
                    if ($handle->reopenWhenReady) {
                        $this->pool->signal($handle, SIGUSR1);
                    }
                    $this->onWorkerReady($handle);
                }
                break;
            case Message::BOOT_FAILED:
                $handle->bootFailure = $message->argument;
                break;
            case Message::FIRST_REQUEST:
                $this->fleet->onFirstRequest($handle);
                break;
            case Message::SERVED:
                [$requests, $memory, $counts] = explode(' ', $message->argument . ' 0 ', 3);
                $handle->requests = (int) $requests;
                $handle->memory = (int) $memory;
                foreach (explode(' ', trim($counts)) as $count) {
                    if (preg_match('/^([a-z]+)=(\d+)$/', $count, $m) === 1) {
                        $handle->counts[$m[1]] = (int) $m[2];
                    }
                }
                break;
            case Message::METRICS:
                $export = json_decode($message->argument, true);
                if (\is_array($export)) {
                    /** @var array<string, array{type: string, help: string, labels: list<string>, buckets: list<float>, series: array<string, float|array{list<int>, float, int}>}> $export */
                    $handle->metrics = $export;
                }
                break;
            case Message::RECYCLE:
                if (!$handle->recycling && $this->state === SupervisorState::Running) {
                    $this->log->info("{$handle->label()} will be replaced: {$message->argument}");
                    $handle->recycling = true;
                }
                break;
            case Message::STOPPING:
                $this->log->debug("{$handle->label()} is stopping: {$message->argument}");
                if ($handle->state === WorkerState::Ready) {
                    $handle->become(WorkerState::Draining);
                }
                break;
            case Message::SIDECAR_OPEN:
                try {
                    $this->sidecars->open($handle->pid, SidecarSpec::fromJson($message->argument));
                } catch (\ValueError $e) {
                    $this->log->error("{$handle->label()} asked for sidecars with a bad spec: {$e->getMessage()}");
                }
                break;
            case Message::SIDECAR_REPLACE:
                [$name, $index, $pid, $kill, $reason] = explode(' ', $message->argument . '    ', 5);
                $this->sidecars->replace($handle->pid, $name, (int) $index, (int) $pid, $kill === '1', trim($reason));
                break;
        }
    }

    private function onWorkerReady(WorkerHandle $ready): void
    {
        if ($this->state !== SupervisorState::Starting) {
            $this->fleet->onReady($ready);
            return;
        }
        if ($this->fleet->isComplete($this->fleet->current)) {
            $this->become(SupervisorState::Running);
            foreach ($this->listeners->bound() as $address) {
                $note = $this->config->connectionsNote === '' ? '' : ": {$this->config->connectionsNote}";
                $this->log->info("ready: {$address->url()} (" . ($this->config->workers === 1 ? "1 worker" : "{$this->config->workers} workers") . ", {$this->driver} driver, "
                    . "{$this->config->connections} connections each, {$this->config->listenerMode->value} listener)$note");
            }
            $this->onReady !== null && ($this->onReady)();
        }
    }

    /** @param bool $clean it exited on its own with code 0 */
    private function onExit(WorkerHandle $handle, string $how, bool $clean): void
    {
        $expected = $handle->state === WorkerState::Draining || $handle->state === WorkerState::Stopping;
        // A worker that said it would go (a script's exit() ends it) and then went: its replacement is under way.
        $announced = $clean && $handle->recycling && $handle->generation === $this->fleet->current;
        // A worker of a generation that never took over (a reload whose new code failed) replaced nobody: the slot's
        // worker of the serving generation is still there.
        if ($this->state === SupervisorState::Running && $handle->generation <= $this->fleet->current) {
            $this->restarts[$handle->slot] = ($this->restarts[$handle->slot] ?? 0) + 1;
        }
        if ($this->metrics !== null) {
            $this->metrics->retire($handle);
            if ($this->state === SupervisorState::Running) {
                $this->metrics->restarted(match (true) {
                    $handle->stallKilled => 'stall',
                    $handle->recycling => 'recycle',
                    $expected => 'reload',
                    default => 'crash',
                });
            }
        }
        $handle->become(WorkerState::Exited);
        $why = $handle->bootFailure !== null ? "$how: {$handle->bootFailure}" : $how . ($handle->stallKilled ? ' for standing still (--stall-timeout)' : '');
        if ($expected || $this->state === SupervisorState::Stopping || $this->state === SupervisorState::Draining) {
            $this->log->debug("{$handle->label()} $how");
        } elseif ($announced && $this->state === SupervisorState::Running) {
            $this->log->info("{$handle->label()} $how");
        } elseif ($this->state === SupervisorState::Starting) {
            $this->startupError ??= "worker {$handle->slot} failed to start: $why";
            $this->stop('start-up failed');
        } else {
            $this->fleet->onUnexpectedExit($handle, $why);
        }
    }

    private function stop(string $why): void
    {
        if ($this->state === SupervisorState::Stopping || $this->state === SupervisorState::Stopped) {
            return;
        }
        $this->log->log($this->startupError === null ? 'info' : 'debug', "stopping ($why)");
        $this->become(SupervisorState::Stopping);
        $this->fleet->cancelSpawns();
        $this->sidecars->stopping();
        $this->background?->freeze();
        foreach ($this->pool->all() as $handle) {
            if ($handle->state !== WorkerState::Stopping) {
                $this->fleet->terminate($handle);
            }
        }
        $this->killAt = microtime(true) + self::STOP_GRACE;
    }

    private function drain(): void
    {
        if ($this->state !== SupervisorState::Running && $this->state !== SupervisorState::Starting) {
            return;
        }
        $this->log->info("draining (SIGQUIT): finishing in-flight requests, up to {$this->config->drainTimeout} s");
        $this->become(SupervisorState::Draining);
        $this->fleet->cancelSpawns();
        // No worker will follow: a shared sidecar set (the php-cgi parent) ends once its last worker is gone.
        $this->sidecars->stopping();
        $this->background?->freeze();
        foreach ($this->pool->all() as $handle) {
            if ($handle->isLive()) {
                $this->fleet->retire($handle);
            }
        }
        $this->killAt = microtime(true) + $this->config->drainTimeout + self::STOP_GRACE;
    }

    private function reload(): void
    {
        if ($this->state !== SupervisorState::Running) {
            $this->log->warning("reload ignored: the server is {$this->state->value}");
            return;
        }
        if ($this->fleet->reloading()) {
            // The generation starting may have read the files before the edit this reload is for: another follows it.
            $this->reloadAsked || $this->log->info('reload asked while one is under way: another follows once the new generation serves');
            $this->reloadAsked = true;
            return;
        }
        $this->freshCode?->__invoke(microtime(true), true);
        $this->fleet->reload();
        $this->sidecars->renewShared();
        $this->background?->reload();
    }

    private function reopenLogs(): void
    {
        foreach ([$this->log->file(), ...$this->logFiles] as $file) {
            try {
                $file->reopen();
            } catch (ServerException $e) {
                $this->log->error($e->getMessage());
            }
        }
        foreach ($this->pool->all() as $handle) {
            if ($handle->state === WorkerState::Booting) {
                $handle->reopenWhenReady = true; // USR1 would kill it before it watches the signal.
            } else {
                $this->pool->signal($handle, SIGUSR1);
            }
        }
        $this->log->info('log files reopened (SIGUSR1)');
    }

    /**
     * In a background process forked from the supervisor: it keeps none of the supervisor's signals, listeners or
     * channels, and gets SIGTERM should the supervisor die (kill -9) rather than run on, orphaned (FFI: prctl; a
     * task worker also watches its parent, a user process without FFI does not).
     */
    private function forgetInChild(): void
    {
        $this->signals->uninstall();
        $this->pool->forgetInChild();
        $this->background?->forgetInChild();
        $this->listeners->close();
        $this->admin?->close(); // a user process that outlives the supervisor must not keep the admin port
        // Only the processes that hold the port hold the pid file's lock: a user process may outlive a killed
        // supervisor (no FFI, or it handles SIGTERM), and would keep every later server from the file.
        $this->pidFile?->forgetInChild();
        foreach ([SIGTERM, SIGQUIT, SIGCHLD, SIGALRM] as $signal) {
            pcntl_signal($signal, SIG_DFL);
        }
        // A terminal's ^C and hang-up are for the supervisor to act on; USR1 and USR2 mean nothing here and come
        // only by accident (`systemctl kill -s USR1` signals every process of the service), so they must not end
        // a task worker with its call, or a user process. The app's code may still watch them (Loop::onSignal()).
        foreach ([SIGINT, SIGHUP, SIGUSR1, SIGUSR2] as $signal) {
            pcntl_signal($signal, SIG_IGN);
        }
        ProcessControl::parentDeathSignal(SIGTERM, $this->pid); // after SIGTERM is back to its default
    }

    /**
     * What the admin listener answers for a path.
     *
     * @return array{int, string, string} status, content type, body
     */
    private function answerAdmin(string $path): array
    {
        $metrics = $this->metrics;
        \assert($metrics !== null);
        $running = $this->state === SupervisorState::Running;
        $problem = match ($path) {
            '/metrics' => null,
            '/health' => $metrics->health($running || $this->state === SupervisorState::Draining, $this->pool->all()),
            '/ready' => $metrics->readiness($running, $this->config->workers, $this->pool->all()),
            default => false,
        };
        return match (true) {
            $problem === false => [404, 'text/plain', "Not found: /metrics, /health, /ready\n"],
            $path === '/metrics' => [200, Metrics\PrometheusText::CONTENT_TYPE, $metrics->render($this->pool->all())],
            $problem === null => [200, 'text/plain', "ok\n"],
            default => [503, 'text/plain', $problem . "\n"],
        };
    }

    private function become(SupervisorState $next): void
    {
        $this->state = $this->state->to($next);
    }

    /**
     * @param resource $channel
     * @param resource|null $bus
     */
    private function workerMain(int $slot, mixed $channel, mixed $bus): int
    {
        $this->signals->uninstall();
        $files = array_values(array_unique([$this->log->file(), ...$this->logFiles], SORT_REGULAR));
        $this->admin?->close(); // the worker has no use for the admin sockets
        $this->background?->forgetInChild();
        $this->background?->releaseTaskSocket(); // a worker calls task workers through the socket's path
        $worker = new Worker($slot, $this->config, $this->log, $channel, $files, $this->balance, $bus, $this->admin !== null);
        return $worker->run($this->listeners->forWorker(...), $this->factory);
    }
}
