<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Loop\Driver\EpollDriver;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Server\Task\TaskClient;

/**
 * The worker process, after fork: boots the service, serves on the loop, drains or stops on signal,
 * and reports to the supervisor on its channel (see Message).
 */
final class Worker implements WorkerContext
{
    public const EXIT_BOOT_FAILED = 70;
    public const EXIT_CRASHED = 1;

    /** Message(Message::ALIVE)->encode(), made once: the heartbeat allocates nothing. */
    private const ALIVE_LINE = Message::ALIVE . "\n";

    /** How long a worker that asked for its replacement waits for the drain before it asks again (ns). */
    private const RECYCLE_ASK_AGAIN = 5_000_000_000;

    private WorkerState $state = WorkerState::Booting;

    private int $served = 0;

    private int $reported = -1;

    /** @var array<string, int> see count() */
    private array $counts = [];

    private bool $countsChanged = false;

    private bool $recycleAsked = false;

    /** Whether the supervisor was told this worker began its first request (it came up fine). */
    private bool $healthSent = false;

    /** Why the replacement was asked for, and when (hrtime, ns): asked again after RECYCLE_ASK_AGAIN without a drain. */
    private string $recycleReason = '';
    private int $recycleAskedAt = 0;

    private ?Service $service = null;

    private string $driverName = '';

    private readonly SidecarClient $sidecars;

    /** Lines from the supervisor not yet complete. */
    private string $inbox = '';

    private bool $supervisorGone = false;

    /** @var list<resource> the listening sockets this worker accepts on */
    private array $listening = [];

    /** How often the heartbeat is due (hrtime, ns); 0: --stall-timeout is off (docs/design/028). */
    private readonly int $beatEvery;

    /** When the last heartbeat was sent (hrtime, ns). */
    private int $lastBeat = 0;

    /** null: --admin-listen is off */
    private readonly ?Metrics\Registry $metrics;

    /**
     * @param resource $channel
     * @param list<LogFile> $logFiles reopened on USR1
     * @param resource|null $bus this worker's node bus socket (see RelayLink)
     */
    public function __construct(
        private readonly int $id,
        private readonly Config $config,
        private readonly Log $log,
        private readonly mixed $channel,
        private readonly array $logFiles,
        private readonly ?AcceptBalance $balance = null,
        private readonly mixed $bus = null,
        bool $measure = false,
    ) {
        $this->sidecars = new SidecarClient($this->send(...));
        $this->metrics = $measure ? new Metrics\Registry() : null;
        $this->beatEvery = $config->stallTimeout > 0 ? (int) (min(1.0, $config->stallTimeout / 4) * 1e9) : 0;
    }

    /**
     * @param \Closure(): list<resource> $listeners
     * @param \Closure(): Service $factory
     * @return int the process exit code
     */
    public function run(\Closure $listeners, \Closure $factory): int
    {
        $this->log->identify("worker {$this->id}");
        @cli_set_process_title("kiln: worker {$this->id}");
        self::resetSignals();
        $this->sidecars->makeCurrent();
        $this->metrics?->makeCurrent();
        $this->metrics?->sampler($this->sample(...));
        if ($this->metrics !== null && TaskClient::configured()) {
            $this->measureTasks($this->metrics);
        }
        WorkerLog::install($this->log(...));
        try {
            $this->createLoop();
            if ($this->bus !== null) {
                // Before the app is built, so its boot code can subscribe (Kiln\Store\NodeBus).
                $link = new RelayLink($this->bus);
                $link->makeCurrent();
                $link->start();
            }
            $service = $this->service = $factory();
            $this->listening = $listeners();
            $service->start($this->listening, $this);
            if ($this->served === $this->config->maxRequests - 1) {
                $service->windDown(); // --max-requests=1: its one response closes its connection, as requestServed() does
            }
            $this->sidecars->start();
        } catch (\Throwable $e) {
            // A ServerException says what is wrong with the set-up (a tier or driver that cannot run here): its message alone.
            $reason = $e instanceof ServerException ? $e->getMessage()
                : $e::class . ': ' . $e->getMessage() . ' in ' . $e->getFile() . ':' . $e->getLine();
            $this->log->debug("boot failed: $e");
            $this->send(new Message(Message::BOOT_FAILED, $reason));
            return self::EXIT_BOOT_FAILED;
        }
        $this->state = $this->state->to(WorkerState::Ready);
        $this->watch();
        $this->send(new Message(Message::READY, $this->driverName));
        try {
            Loop::run();
        } catch (\Throwable $e) {
            $this->log->error("worker crashed: $e");
            return self::EXIT_CRASHED;
        } finally {
            if ($this->supervisorGone) {
                $this->sidecars->terminateAll();
            }
        }
        $this->report();
        return 0;
    }

    /** The task series (docs/design/024): calls in flight (queued or running), made, and failed, counted since the last export. */
    private function measureTasks(Metrics\Registry $registry): void
    {
        $inFlight = $registry->gauge('kiln_task_calls_in_flight', 'Task calls queued or running (task())');
        $calls = $registry->counter('kiln_task_calls_total', 'Task calls made');
        $failures = $registry->counter('kiln_task_failures_total', 'Task calls that failed: threw, timed out, crashed, or refused with a full queue');
        $seen = [0, 0];
        $registry->sampler(static function () use ($inFlight, $calls, $failures, &$seen): void {
            $client = TaskClient::current();
            $inFlight->set($client->inFlight());
            $calls->inc($client->calls() - $seen[0]);
            $failures->inc($client->failures() - $seen[1]);
            $seen = [$client->calls(), $client->failures()];
        });
    }

    private function createLoop(): void
    {
        $connections = $this->config->connections;
        $driver = match ($this->config->driver) {
            'select' => new SelectDriver(),
            'epoll' => EpollDriver::isSupported() ? new EpollDriver()
                : throw new ServerException('--driver=epoll needs the FFI extension (php-ffi) with ffi.enable'),
            default => Loop::createDriver($connections),
        };
        Loop::set($driver);
        // A background job that failed with nobody awaiting it is a bug to log, not a reason to kill the
        // worker and every request it is serving.
        Loop::setErrorHandler(function (\Throwable $error): void {
            $this->log->error('Unhandled ' . $error::class . ' in a background job: ' . $error->getMessage()
                . ' at ' . $error->getFile() . ':' . $error->getLine());
        });
        $class = $driver::class;
        $this->driverName = strtolower((string) preg_replace('/Driver$/', '', substr($class, (int) strrpos($class, '\\') + 1)));
        $capacity = $driver->capacity();
        if ($capacity < $connections) {
            // The HTTP service caps its connections at the driver's capacity; say how to get more.
            $this->log->warning("--connections=$connections is above what the {$this->driverName} driver can watch here ($capacity): capped at $capacity"
                . ($this->driverName === 'select' ? '; the epoll driver (php-ffi, not --driver=select) watches more' : '; raise the open-files limit (ulimit -n) for more'));
        }
    }

    private function watch(): void
    {
        foreach ([
            SIGTERM => $this->stop(...),
            SIGQUIT => fn() => $this->drain('drain requested'),
            SIGUSR1 => $this->reopen(...),
        ] as $signal => $handler) {
            Loop::unreference(Loop::onSignal($signal, static fn() => $handler()));
        }
        // The supervisor writes only sidecar lines; EOF means it is gone: serve out what is in flight and leave.
        stream_set_blocking($this->channel, false);
        Loop::unreference(Loop::onReadable($this->channel, function (string $id): void {
            $data = @fread($this->channel, 65536);
            if ($data === false || ($data === '' && feof($this->channel))) {
                Loop::cancel($id);
                $this->supervisorGone = true;
                $this->drain('supervisor gone');
                // No new generation will accept on the port: it is let go now, not when the last request in flight
                // is done, so that new clients are refused at once (and a new server can bind it) rather than
                // queued for a worker that will never accept them. The drain accepted what was queued already.
                foreach ($this->listening as $socket) {
                    \is_resource($socket) && @fclose($socket);
                }
                $this->listening = [];
                return;
            }
            $this->inbox .= $data;
            foreach (Message::drain($this->inbox) as $message) {
                $this->sidecars->receive($message);
            }
        }));
        Loop::unreference(Loop::repeat(1.0, fn() => $this->report()));
        if ($this->config->stallTimeout > 0) { // the heartbeat the supervisor watches (docs/design/028)
            $service = $this->service;
            (new Internal\StallReport($this->log, static fn(): array => $service instanceof InFlight ? $service->inFlight() : [], posix_getppid()))->install();
            // The timer beats for a worker that is idle or whose handlers wait; requestServed() for one that
            // runs many handlers in a turn (timers run only between turns).
            Loop::unreference(Loop::repeat($this->beatEvery / 1e9, fn() => $this->beat(hrtime(true))));
        }
    }

    public function firstRequestBegan(): void
    {
        if (!$this->healthSent) {
            $this->healthSent = true;
            $this->send(new Message(Message::FIRST_REQUEST));
        }
    }

    public function requestServed(): void
    {
        // A finished request is progress: with the stall timeout on, it beats when a beat is due, so a
        // turn that runs many short handlers one after another is not mistaken for one that stands still.
        if ($this->beatEvery > 0 && ($now = \hrtime(true)) - $this->lastBeat >= $this->beatEvery) {
            $this->beat($now);
        }
        $this->served++;
        if ($this->served === 1) {
            $this->firstRequestBegan(); // a service that does not say when a request begins
        }
        if ($this->recycleAsked) {
            return;
        }
        $max = $this->config->maxRequests;
        if ($max > 0 && $this->served >= $max) {
            $this->recycle("served $this->served requests (--max-requests=$max)");
        } elseif ($this->config->maxMemory > 0 && ($memory = \memory_get_usage(true)) > $this->config->maxMemory) {
            $this->recycle("memory $memory bytes is above --max-memory={$this->config->maxMemory}");
        } elseif ($this->served === $max - 1) {
            $this->service?->windDown(); // the next response is the last one: it closes its connection
        }
    }

    private function recycle(string $reason): void
    {
        $this->recycleAsked = true;
        $this->recycleReason = $reason;
        $this->recycleAskedAt = hrtime(true);
        $this->report();
        $this->send(new Message(Message::RECYCLE, $reason));
        // Until the drain comes (once the replacement is ready), each connection ends with its next response.
        $this->service?->windDown();
    }

    public function log(string $level, string $message): void
    {
        $this->log->log($level, $message);
    }

    public function workerId(): int
    {
        return $this->id;
    }

    public function acceptBalance(): ?AcceptBalance
    {
        return $this->balance;
    }

    public function sharesListeners(): bool
    {
        return $this->config->listenerMode === ListenerMode::Shared;
    }

    public function retiring(string $reason): float
    {
        if (!$this->recycleAsked) {
            $this->recycle($reason);
        }
        // Ending already: the supervisor must not ask it to drain once the replacement is ready. That SIGQUIT
        // would find PHP shutting down, past its handlers, and end the process by the signal's default action
        // (a core dump where the system keeps them) instead of its own exit.
        $this->send(new Message(Message::STOPPING, 'ending on its own'));
        return $this->config->drainTimeout;
    }

    public function count(string $name, int $value): void
    {
        if (($this->counts[$name] ?? null) !== $value) {
            $this->counts[$name] = $value;
            $this->countsChanged = true;
        }
    }

    public function drainTimeout(): float
    {
        return $this->config->drainTimeout;
    }

    private function drain(string $reason): void
    {
        $service = $this->service;
        if ($this->state !== WorkerState::Ready || $service === null) {
            return;
        }
        $this->state = $this->state->to(WorkerState::Draining);
        $this->send(new Message(Message::STOPPING, $reason));
        $deadline = Loop::delay($this->config->drainTimeout, function (): void {
            $this->log->warning("drain deadline of {$this->config->drainTimeout} s passed: closing what is left");
            $this->stop();
        });
        $service->drain(function () use ($deadline): void {
            Loop::cancel($deadline);
            if ($this->state === WorkerState::Draining) {
                $this->state = $this->state->to(WorkerState::Exited);
                Loop::stop();
            }
        });
    }

    private function stop(): void
    {
        if ($this->state === WorkerState::Stopping || $this->state === WorkerState::Exited) {
            return;
        }
        $this->state = $this->state->to(WorkerState::Stopping);
        $this->service?->stop();
        $this->state = $this->state->to(WorkerState::Exited);
        Loop::stop();
    }

    private function reopen(): void
    {
        foreach ($this->logFiles as $file) {
            try {
                $file->reopen();
            } catch (ServerException $e) {
                $this->log->error($e->getMessage());
            }
        }
        $this->log->debug('log files reopened');
    }

    public function metrics(): ?Metrics\Registry
    {
        return $this->metrics;
    }

    /** The worker's own gauges, read as its metrics are exported. */
    private function sample(): void
    {
        \assert($this->metrics !== null);
        $this->metrics->gauge('kiln_worker_memory_bytes', 'Memory the worker holds from the system (memory_get_usage(true))', ['worker'])
            ->set(memory_get_usage(true), (string) $this->id);
        $connections = $this->metrics->gauge('kiln_connections', 'Open client connections, by kind', ['kind']);
        foreach (['websocket', 'sse'] as $kind) {
            $connections->set($this->counts[$kind] ?? 0, $kind);
        }
    }

    private function report(): void
    {
        if ($this->recycleAsked && $this->state === WorkerState::Ready && hrtime(true) - $this->recycleAskedAt > self::RECYCLE_ASK_AGAIN) {
            // No drain came: the supervisor was not running yet (still starting), or the message was not acted on.
            // Asked again; a worker winding down would otherwise close every connection after one response for good.
            $this->recycleAskedAt = hrtime(true);
            $this->send(new Message(Message::RECYCLE, $this->recycleReason));
        }
        if ($this->metrics !== null) {
            $this->send(new Message(Message::METRICS, (string) json_encode($this->metrics->export(), JSON_PRESERVE_ZERO_FRACTION | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE)));
        }
        if ($this->served !== $this->reported || $this->countsChanged) {
            $this->reported = $this->served;
            $this->countsChanged = false;
            $counts = '';
            foreach ($this->counts as $name => $value) {
                $counts .= " $name=$value";
            }
            $this->send(new Message(Message::SERVED, $this->served . ' ' . memory_get_usage(true) . $counts));
        }
    }

    /**
     * The heartbeat (`alive`): written only if the channel takes it now. A beat it cannot take is dropped,
     * never waited for: a supervisor that is stopped (^Z) or slow must not freeze the worker, and the next
     * beat says the same. Six bytes on a Unix socket go whole or not at all.
     */
    private function beat(int $now): void
    {
        $this->lastBeat = $now;
        $written = (int) @fwrite($this->channel, self::ALIVE_LINE);
        if ($written > 0 && $written < \strlen(self::ALIVE_LINE)) {
            $this->finish(self::ALIVE_LINE, $written); // never seen; half a line would garble the next one
        }
    }

    private function send(Message $message): void
    {
        // Short lines on a socket the supervisor keeps reading: one write each. A long line (a metrics export)
        // the channel does not take whole is finished blocking: half a line would garble the next one too.
        $line = $message->encode();
        $written = (int) @fwrite($this->channel, $line);
        if ($written < \strlen($line)) {
            $this->finish($line, $written);
        }
    }

    private function finish(string $line, int $written): void
    {
        if (\is_resource($this->channel) && !$this->supervisorGone) {
            stream_set_blocking($this->channel, true);
            @fwrite($this->channel, substr($line, $written));
            stream_set_blocking($this->channel, false);
        }
    }

    /**
     * A forked worker starts from default dispositions; INT and HUP belong to the supervisor (a terminal sends them to
     * the whole group). USR2 is ignored unless --stall-timeout's report or the app takes it: a stray one (a signal to
     * every process of the service) must not end the worker with its requests.
     */
    private static function resetSignals(): void
    {
        pcntl_async_signals(false);
        foreach ([SIGTERM, SIGQUIT, SIGUSR1, SIGCHLD, SIGALRM] as $signal) {
            pcntl_signal($signal, SIG_DFL);
        }
        foreach ([SIGINT, SIGHUP, SIGPIPE, SIGUSR2] as $signal) {
            pcntl_signal($signal, SIG_IGN);
        }
    }
}
