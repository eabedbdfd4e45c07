<?php

declare(strict_types=1);

namespace Kiln\Server\Background;

use Kiln\Server\Log;
use Kiln\Server\ServerException;
use Kiln\Server\StderrRelay;
use Kiln\Server\Task\TaskClient;
use Kiln\Server\Task\TaskWorkerProcess;

/**
 * The supervisor's background processes: the task workers (`--task-workers`), taking calls from one unix
 * socket in a private directory, and the app's user processes (App::process()). Each is forked from the
 * supervisor and loads the app afresh; a reload replaces them all (task workers finish their call first).
 * They stop after the workers, so a drain's last requests can still run tasks. Why one socket and why the
 * supervisor: docs/design/023-timers-and-task-workers.md.
 *
 * The supervisor learns the names of the user processes by loading the app once in a short-lived child
 * (AppInspection) at start and on each reload, whose answer it reads in its loop: it never loads app code itself.
 */
final class BackgroundProcesses
{
    private const INSPECT_TIMEOUT = 30.0;
    private const TASK = 'task worker ';
    private const PROCESS = 'process ';

    private ?ChildSet $children = null;

    private ?StderrRelay $stderr = null;

    /** The child asked for the names of the user processes, while its answer is awaited. */
    private ?AppInspection $inspection = null;

    /** Whether the user processes that run are to be replaced once the inspection answers (a reload asked). */
    private bool $restartProcesses = false;

    /** @var array<int, true> inspection children given up and killed, until they are reaped */
    private array $abandoned = [];

    /** @var resource|null */
    private mixed $server = null;

    private ?string $dir = null;

    /** @var \Closure(): void */
    private \Closure $inChild;

    /**
     * @param \Closure(): AppBackground $load loads the app; called in the child processes only
     * @param bool $hasApp false for a document root: no user processes, nothing to inspect
     */
    public function __construct(
        private readonly Log $log,
        private readonly TaskSettings $tasks,
        private readonly \Closure $load,
        private readonly bool $hasApp,
        private readonly int $maxRequests = 0,
        private readonly int $maxMemory = 0,
    ) {
        $this->inChild = static function (): void {};
    }

    /**
     * Opens the task socket and starts every process; before the workers are forked (they inherit where the
     * task socket is).
     *
     * @param \Closure(): void $inChild runs first in each child: lets go of what belongs to the supervisor
     * @param ?StderrRelay $stderr files what the children write to their standard error (null: they keep the server's)
     * @throws ServerException when the task socket cannot be made
     */
    public function start(\Closure $inChild, ?StderrRelay $stderr = null): void
    {
        $this->inChild = $inChild;
        $this->stderr = $stderr;
        $this->children = new ChildSet($this->log, $inChild, stderr: $stderr);
        if ($this->tasks->workers > 0) {
            $path = $this->openSocket();
            TaskClient::configure($path, $this->tasks->timeout);
            for ($i = 1; $i <= $this->tasks->workers; $i++) {
                $this->children->keep(self::TASK . $i, $this->taskWorker(...), recycles: true);
            }
            $this->log->debug("{$this->tasks->workers} task worker(s) on $path");
        }
        $this->startProcesses(false);
    }

    /** New code: every task worker leaves after its call and a fresh one loads the app; user processes start again. */
    public function reload(): void
    {
        if ($this->children === null) {
            return;
        }
        foreach ($this->children->keys() as $key) {
            if (str_starts_with($key, self::TASK)) {
                // It finishes the call it runs, which may take until the call's time limit.
                $this->children->restart($key, SIGQUIT, $this->tasks->timeout + 1.0);
            }
        }
        $this->startProcesses(true);
    }

    /** The server begins to stop or drain: a process that ends from now on is not started again. */
    public function freeze(): void
    {
        $this->children?->freeze();
        $this->endInspection();
    }

    /** The server stops (its workers are gone): every process is told to end, none starts again. */
    public function stopping(): void
    {
        $this->children?->stopAll();
        $this->endInspection();
    }

    /**
     * For metrics: how often each process ended unasked (crashed, killed, exited) and was started again;
     * `task worker 2`, `process mailer`… => count. Recycles and reloads are not counted.
     *
     * @return array<string, int>
     */
    public function restarts(): array
    {
        return $this->children?->restarts() ?? [];
    }

    public function killAll(): void
    {
        $this->children?->killAll();
        $this->endInspection();
    }

    public function isEmpty(): bool
    {
        return ($this->children?->isEmpty() ?? true) && $this->inspection === null && $this->abandoned === [];
    }

    public function reaped(int $pid, int $status): bool
    {
        if (isset($this->abandoned[$pid])) {
            unset($this->abandoned[$pid]);
            $this->stderr?->released($pid);
            return true;
        }
        if ($this->inspection?->pid === $pid) {
            $this->inspection->exited();
            $this->stderr?->released($pid);
            // It wrote its whole answer before exiting: finish now, even if a program it started holds the socket.
            $this->inspection->read();
            $this->finishInspection();
            return true;
        }
        return $this->children?->reaped($pid, $status) ?? false;
    }

    /** In a process forked from the supervisor: an inspection under way is the supervisor's (its stream is closed here). */
    public function forgetInChild(): void
    {
        $this->inspection?->forget();
        $this->inspection = null;
        $this->abandoned = [];
    }

    /** @return array<string, resource> for the supervisor's select: the inspection's answer (key `inspect`) */
    public function streams(): array
    {
        $stream = $this->inspection?->stream();
        return $stream === null ? [] : ['inspect' => $stream];
    }

    /** A stream of streams() was readable. */
    public function onReadable(string $key): void
    {
        if ($key === 'inspect' && $this->inspection?->read()) {
            $this->finishInspection();
        }
    }

    public function tick(float $now): void
    {
        $this->children?->tick($now);
        if ($this->inspection !== null && $now >= $this->inspection->deadline) {
            $this->log->warning(\sprintf('the app\'s user processes are not known (the app did not load within %.0f s)', self::INSPECT_TIMEOUT));
            $this->endInspection();
        }
    }

    public function nextWakeAt(): float
    {
        return min($this->children?->nextWakeAt() ?? INF, $this->inspection === null ? INF : $this->inspection->deadline);
    }

    /** @return array<string, int> what runs now: `task worker 1`, `process mailer`… => pid */
    public function pids(): array
    {
        $pids = [];
        foreach ($this->children?->keys() ?? [] as $key) {
            $pid = $this->children?->pid($key);
            if ($pid !== null) {
                $pids[$key] = $pid;
            }
        }
        return $pids;
    }

    /**
     * In a child that is no task worker (an HTTP worker, a user process, the app's inspection): it lets go of the task
     * socket's listening end, which it would otherwise hold for as long as it runs, and pass on to any program it
     * starts. The socket's file stays: it is the supervisor's to remove.
     */
    public function releaseTaskSocket(): void
    {
        if (\is_resource($this->server)) {
            fclose($this->server);
        }
        $this->server = null;
        $this->dir = null;
    }

    /** Removes the task socket (once every process was reaped). */
    public function close(): void
    {
        if (\is_resource($this->server)) {
            fclose($this->server);
        }
        $this->server = null;
        if ($this->dir !== null) {
            @unlink($this->dir . '/tasks.sock');
            @rmdir($this->dir);
            $this->dir = null;
        }
        TaskClient::configure(null, $this->tasks->timeout);
    }

    private function taskWorker(): int
    {
        $server = $this->server;
        \assert(\is_resource($server));
        $app = ($this->load)();
        return (new TaskWorkerProcess($server, $app, $this->log, $this->maxRequests, $this->maxMemory))->run();
    }

    /** Asks a fresh child for the names of the user processes; applyProcesses() acts on its answer. */
    private function startProcesses(bool $restart): void
    {
        if (!$this->hasApp) {
            $this->applyProcesses([], $restart);
            return;
        }
        // A reload while an inspection runs: the fresh code is asked again, and a restart asked by either stands.
        $restart = $restart || $this->restartProcesses;
        $this->endInspection();
        $this->restartProcesses = $restart;
        $inChild = function (): void {
            ($this->inChild)();
            $this->releaseTaskSocket();
        };
        $this->inspection = AppInspection::start($inChild, $this->load, $this->log, self::INSPECT_TIMEOUT, $this->stderr);
    }

    /** @param list<string> $names the app's user processes */
    private function applyProcesses(array $names, bool $restart): void
    {
        $children = $this->children;
        \assert($children !== null);
        foreach ($children->keys() as $key) {
            if (str_starts_with($key, self::PROCESS) && !\in_array(substr($key, \strlen(self::PROCESS)), $names, true)) {
                $children->drop($key);
            }
        }
        foreach ($names as $name) {
            $key = self::PROCESS . $name;
            if ($restart && $children->pid($key) !== null) {
                $children->restart($key, SIGTERM);
                continue;
            }
            $children->keep($key, function () use ($name): int {
                $this->releaseTaskSocket();
                $fn = ($this->load)()->processes()[$name] ?? null;
                if ($fn === null) {
                    $this->log->warning("the app no longer has a process named '$name'");
                    return 0;
                }
                $fn();
                return 0;
            });
        }
    }

    /** The inspection's answer is all there: the user processes it names start, or are replaced. */
    private function finishInspection(): void
    {
        $restart = $this->restartProcesses;
        $inspection = $this->endInspection();
        $names = $inspection?->names($this->log);
        if ($names !== null) { // null: the app did not load, and what runs keeps running
            $this->applyProcesses($names, $restart);
        }
    }

    /** Takes the inspection off; a child of it that has not exited yet is reaped later (abandoned). */
    private function endInspection(): ?AppInspection
    {
        $inspection = $this->inspection;
        if ($inspection !== null) {
            $inspection->end();
            $inspection->hasExited() || $this->abandoned[$inspection->pid] = true;
            $this->inspection = null;
            $this->restartProcesses = false;
        }
        return $inspection;
    }

    private function openSocket(): string
    {
        $temp = rtrim(sys_get_temp_dir(), '/');
        self::removeStaleSockets($temp);
        $dir = "$temp/kiln-tasks-" . getmypid() . '-' . bin2hex(random_bytes(4));
        if (!@mkdir($dir, 0700)) {
            throw new ServerException("Cannot create the task socket directory $dir: " . (error_get_last()['message'] ?? 'mkdir failed'));
        }
        $this->dir = $dir;
        // The kernel's backlog is the node's queue: with backlog N - 1, Linux queues N connections and refuses the next (EAGAIN).
        $context = stream_context_create(['socket' => ['backlog' => $this->tasks->queue - 1]]);
        $server = @stream_socket_server("unix://$dir/tasks.sock", $errno, $error, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN, $context);
        if ($server === false) {
            throw new ServerException("Cannot listen on the task socket $dir/tasks.sock: $error");
        }
        $this->server = $server;
        return "$dir/tasks.sock";
    }

    /**
     * The task socket directories of supervisors that are gone: a supervisor killed with SIGKILL cannot remove its own,
     * and each would stay in the temp directory. One whose supervisor's pid runs (or was reused) is left alone.
     */
    private static function removeStaleSockets(string $temp): void
    {
        foreach (glob("$temp/kiln-tasks-*-*", GLOB_ONLYDIR) ?: [] as $dir) {
            if (preg_match('~/kiln-tasks-(\d+)-[0-9a-f]{8}$~', $dir, $m) === 1 && !posix_kill((int) $m[1], 0) && posix_get_last_error() === \PCNTL_ESRCH) {
                @unlink("$dir/tasks.sock");
                @rmdir($dir);
            }
        }
    }
}
