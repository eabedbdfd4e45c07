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
 * (inspect()) at start and on each reload: it never loads app code itself.
 */
final class BackgroundProcesses
{
    private const INSPECT_TIMEOUT = 30.0;
    private const TASK = 'task worker ';
    private const PROCESS = 'process ';

    private ?ChildSet $children = null;

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
    }

    /** The server stops (its workers are gone): every process is told to end, none starts again. */
    public function stopping(): void
    {
        $this->children?->stopAll();
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
    }

    public function isEmpty(): bool
    {
        return $this->children?->isEmpty() ?? true;
    }

    public function reaped(int $pid, int $status): bool
    {
        return $this->children?->reaped($pid, $status) ?? false;
    }

    public function tick(float $now): void
    {
        $this->children?->tick($now);
    }

    public function nextWakeAt(): float
    {
        return $this->children?->nextWakeAt() ?? INF;
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

    private function startProcesses(bool $restart): void
    {
        \assert($this->children !== null);
        $names = $this->hasApp ? $this->inspect() : [];
        if ($names === null) {
            return; // the app did not load: what runs keeps running
        }
        foreach ($this->children->keys() as $key) {
            if (str_starts_with($key, self::PROCESS) && !\in_array(substr($key, \strlen(self::PROCESS)), $names, true)) {
                $this->children->drop($key);
            }
        }
        foreach ($names as $name) {
            $key = self::PROCESS . $name;
            if ($restart && $this->children->pid($key) !== null) {
                $this->children->restart($key, SIGTERM);
                continue;
            }
            $this->children->keep($key, function () use ($name): int {
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

    /**
     * The names of the app's user processes, from a child that loads it; null when it could not.
     *
     * @return list<string>|null
     */
    private function inspect(): ?array
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        if ($pair === false) {
            $this->log->error('cannot look for the app\'s user processes: no socket pair');
            return null;
        }
        [$ours, $theirs] = $pair;
        $pid = pcntl_fork();
        if ($pid === -1) {
            fclose($ours);
            fclose($theirs);
            $this->log->error('cannot look for the app\'s user processes: ' . pcntl_strerror(pcntl_get_last_error()));
            return null;
        }
        if ($pid === 0) {
            fclose($ours);
            ($this->inChild)();
            try {
                $answer = ['ok', array_map('strval', array_keys(($this->load)()->processes()))];
            } catch (\Throwable $e) {
                $answer = ['error', $e::class . ': ' . $e->getMessage()];
            }
            fwrite($theirs, json_encode($answer, JSON_THROW_ON_ERROR));
            fclose($theirs);
            exit(0);
        }
        fclose($theirs);
        $data = '';
        $deadline = microtime(true) + self::INSPECT_TIMEOUT;
        while (!feof($ours) && ($left = $deadline - microtime(true)) > 0) {
            $read = [$ours];
            $write = $except = null;
            if (@stream_select($read, $write, $except, (int) $left, (int) (fmod($left, 1.0) * 1e6)) > 0) {
                $data .= (string) fread($ours, 65536);
            }
        }
        fclose($ours);
        @posix_kill($pid, SIGKILL);
        pcntl_waitpid($pid, $status);
        $answer = json_decode($data, true);
        if (!\is_array($answer) || ($answer[0] ?? null) !== 'ok' || !\is_array($answer[1] ?? null)) {
            $why = \is_array($answer) && \is_string($answer[1] ?? null) ? $answer[1] : 'no answer';
            $this->log->debug("the app's user processes are not known (the app did not load: $why)");
            return null;
        }
        return array_values(array_filter($answer[1], 'is_string'));
    }

    private function openSocket(): string
    {
        $dir = rtrim(sys_get_temp_dir(), '/') . '/kiln-tasks-' . getmypid() . '-' . bin2hex(random_bytes(4));
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
}
