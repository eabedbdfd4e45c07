<?php

declare(strict_types=1);

namespace Kiln\Server;

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

    private Fleet $fleet;

    private Sidecars $sidecars;

    private SignalInbox $signals;

    private float $killAt = INF;

    private float $statusAt = 0.0;

    private ?string $startupError = null;

    private string $driver = '';

    /** Connections per worker, shared with the workers so one listening socket's connections spread evenly. */
    private readonly ?AcceptBalance $balance;

    /**
     * @param \Closure(): Service $factory builds the service inside each worker
     * @param list<LogFile> $logFiles reopened on USR1 (in the supervisor and the workers)
     * @param ?\Closure(): void $onReady called once the first generation serves
     */
    public function __construct(
        private readonly Config $config,
        private readonly Listeners $listeners,
        private readonly Log $log,
        private readonly \Closure $factory,
        private readonly array $logFiles = [],
        private readonly ?StatusFile $status = null,
        private readonly ?\Closure $onReady = null,
    ) {
        $this->signals = new SignalInbox();
        $this->pool = new WorkerPool($this->workerMain(...), new BusRelay($log));
        $this->fleet = new Fleet($this->pool, $config->workers, $log);
        $this->sidecars = new Sidecars($log, $this->pool->send(...));
        $this->balance = $config->listenerMode === ListenerMode::Shared ? AcceptBalance::create($config->workers) : null;
    }

    /** @return int exit code (0); throws ServerException when the first generation cannot start */
    public function run(): int
    {
        $this->signals->install();
        @cli_set_process_title('kiln: supervisor');
        $this->fleet->startFirstGeneration();
        while ($this->state !== SupervisorState::Stopped) {
            $this->tick();
        }
        $this->signals->uninstall();
        $this->sidecars->close();
        $this->listeners->close();
        $this->status?->remove();
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
        foreach ($this->pool->read($this->timeout()) as [$handle, $message]) {
            $this->onMessage($handle, $message);
        }
        foreach ($this->pool->reap($this->sidecars->reaped(...)) as [$handle, $how]) {
            foreach ($this->pool->flush($handle) as [, $message]) {
                $this->onMessage($handle, $message);
            }
            $handle->closeChannel();
            $this->sidecars->ownerGone($handle->pid);
            $this->onExit($handle, $how);
        }
        $now = microtime(true);
        if ($this->state === SupervisorState::Running) {
            $this->fleet->keepSlotsServing($now);
        }
        $this->sidecars->tick($now);
        $this->pool->flushOutboxes();
        if ($now >= $this->killAt) {
            foreach ($this->pool->all() as $handle) {
                $this->log->warning("{$handle->label()} did not exit in time: killing it");
                $this->pool->signal($handle, SIGKILL);
            }
            if ($this->pool->isEmpty()) {
                $this->sidecars->killAll();
            }
            $this->killAt = $now + 1.0;
        }
        $stopping = $this->state === SupervisorState::Stopping || $this->state === SupervisorState::Draining;
        if ($stopping && $this->pool->isEmpty() && $this->sidecars->isEmpty()) {
            if ($this->state === SupervisorState::Draining) {
                $this->become(SupervisorState::Stopping);
            }
            $this->become(SupervisorState::Stopped);
            // A failed start is reported once, by the command line, as one line.
            $this->startupError === null ? $this->log->info('stopped') : $this->log->debug('start-up failed: stopped');
        } elseif ($this->status !== null && $now >= $this->statusAt) {
            $this->statusAt = $now + 1.0;
            $this->status->write($this->state, $this->pool->all(), $this->listeners->bound(), $this->sidecars->pids());
        }
    }

    private function timeout(): float
    {
        $next = min(microtime(true) + 0.5, $this->killAt, $this->statusAt + 1.0, $this->fleet->nextSpawnAt(), $this->sidecars->nextWakeAt());
        return max(0.0, min(0.5, $next - microtime(true)));
    }

    private function onSignal(int $signal): void
    {
        match ($signal) {
            SIGTERM, SIGINT => $this->stop($signal === SIGINT ? 'SIGINT' : 'SIGTERM'),
            SIGQUIT => $this->drain(),
            SIGHUP => $this->reload(),
            SIGUSR1 => $this->reopenLogs(),
            default => null, // SIGCHLD only wakes the loop; reap() does the rest.
        };
    }

    private function onMessage(WorkerHandle $handle, Message $message): void
    {
        switch ($message->type) {
            case Message::READY:
                $this->driver = $message->argument;
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
                $this->log->info("ready: {$address->url()} ({$this->config->workers} workers, {$this->driver} driver, "
                    . "{$this->config->connections} connections each, {$this->config->listenerMode->value} listener)$note");
            }
            $this->onReady !== null && ($this->onReady)();
        }
    }

    private function onExit(WorkerHandle $handle, string $how): void
    {
        $expected = $handle->state === WorkerState::Draining || $handle->state === WorkerState::Stopping;
        $handle->become(WorkerState::Exited);
        $why = $handle->bootFailure !== null ? "$how: {$handle->bootFailure}" : $how;
        if ($expected || $this->state === SupervisorState::Stopping || $this->state === SupervisorState::Draining) {
            $this->log->debug("{$handle->label()} $how");
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
        $this->fleet->reload();
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
        $worker = new Worker($slot, $this->config, $this->log, $channel, $files, $this->balance, $bus);
        return $worker->run($this->listeners->forWorker(...), $this->factory);
    }
}
