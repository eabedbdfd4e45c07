<?php

declare(strict_types=1);

namespace Kiln\Server\Task;

use Kiln\Server\Background\AppBackground;
use Kiln\Server\Log;

/**
 * One task worker, after fork: takes calls from the node's task socket one at a time (accept, say its pid,
 * read the call, run it, answer, close; the caller sends its call only once it heard the pid, so a call whose
 * caller gave up while it waited in the queue is never run) and blocks while it runs them, which is what it is for. It leaves
 * after a call on QUIT (a reload), when the supervisor is gone, or when --max-requests or --max-memory
 * says so (the supervisor starts a fresh one); TERM ends it at once.
 *
 * QUIT is blocked while a call runs and taken once it is answered: a handled signal would cut the call's
 * sleep(), usleep() or a wait on a stream short, and a reload must not change what a call does. A program the
 * call starts (proc_open(), exec()) inherits that mask, and runs with QUIT blocked.
 */
final class TaskWorkerProcess
{
    private const IO_TIMEOUT = 30;

    private bool $quit = false;

    private int $served = 0;

    /** @var array<class-string, object> the instance each class's task methods run on */
    private array $instances = [];

    /** @param resource $server the task socket, listening */
    public function __construct(
        private readonly mixed $server,
        private readonly AppBackground $app,
        private readonly Log $log,
        private readonly int $maxRequests,
        private readonly int $maxMemory,
    ) {}

    public function run(): int
    {
        pcntl_async_signals(true);
        pcntl_signal(SIGPIPE, SIG_IGN);
        pcntl_signal(SIGQUIT, function (): void {
            $this->quit = true;
        });
        $parent = posix_getppid();
        while (!$this->quit && posix_getppid() === $parent) {
            $connection = @stream_socket_accept($this->server, 1.0);
            if ($connection === false) {
                continue;
            }
            pcntl_sigprocmask(SIG_BLOCK, [SIGQUIT]);
            $this->serve($connection);
            @fclose($connection);
            pcntl_sigprocmask(SIG_UNBLOCK, [SIGQUIT]);
            pcntl_signal_dispatch(); // a QUIT that came during the call sets $quit before the loop looks at it
            $this->served++;
            $memory = memory_get_usage(true);
            if ($this->maxRequests > 0 && $this->served >= $this->maxRequests) {
                $this->log->info("ran {$this->served} tasks (--max-requests={$this->maxRequests}): replaced");
                return 0;
            }
            if ($this->maxMemory > 0 && $memory > $this->maxMemory) {
                $this->log->info("memory $memory bytes is above --max-memory={$this->maxMemory}: replaced");
                return 0;
            }
        }
        return 0;
    }

    /** @param resource $connection */
    private function serve(mixed $connection): void
    {
        stream_set_blocking($connection, true);
        stream_set_timeout($connection, self::IO_TIMEOUT);
        if (@fwrite($connection, TaskFrames::encode((string) getmypid())) === false) {
            return;
        }
        $frames = new TaskFrames();
        while (($frame = $frames->next()) === null) {
            $bytes = @fread($connection, 65536);
            if ($bytes === false || $bytes === '') {
                return; // the caller gave up (it timed out while the call waited in the queue)
            }
            $frames->feed($bytes);
        }
        try {
            [$task, $args] = TaskCodec::decodeCall($frame);
            error_clear_last(); // the call's error_get_last() sees its own errors, not this loop's accept timeouts
            $outcome = TaskCodec::encodeValue($this->resolve($task)(...$args));
        } catch (\Throwable $e) {
            $outcome = TaskCodec::encodeFailure($e);
        }
        $bytes = TaskFrames::encode($outcome);
        while ($bytes !== '') {
            $written = @fwrite($connection, $bytes);
            if ($written === false || $written === 0) {
                return; // the caller is gone (it timed out)
            }
            $bytes = substr($bytes, $written);
        }
    }

    /** @param string|array{string, string} $task */
    private function resolve(string|array $task): \Closure
    {
        if (\is_string($task)) {
            return $this->app->namedTask($task)
                ?? throw new \Error("No task is named '$task': register it with \$app->task('$task', fn (...) => ...)");
        }
        [$class, $method] = $task;
        if (!class_exists($class)) {
            throw new \Error("Task class $class cannot be loaded in the task worker (is its autoloader required by app.php?)");
        }
        $reflection = new \ReflectionClass($class);
        if (!$reflection->hasMethod($method) || !($found = $reflection->getMethod($method))->isPublic()) {
            throw new \Error("Task method $class::$method() does not exist or is not public");
        }
        if ($found->isStatic()) {
            return $found->getClosure();
        }
        $instance = $this->instances[$class] ??= $reflection->newInstance();
        return $found->getClosure($instance);
    }
}
