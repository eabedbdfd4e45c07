<?php

declare(strict_types=1);

namespace Kiln\Server\Task;

use function Kiln\Loop\async;

use Kiln\Loop\CancelledException;
use Kiln\Loop\Future;

use function Kiln\Loop\read;

use Kiln\Loop\StreamException;
use Kiln\Loop\TimeoutCancellation;

use function Kiln\Loop\write;

/**
 * A worker's way to the node's task workers. call() connects to the task socket (a unix connect never
 * blocks: a full queue is refused at once, TaskQueueFullException), waits in a Fiber of its own for a task
 * worker to take the call, sends it, and completes the Future with the result. On a timeout the task
 * worker running the call is killed (the supervisor replaces it); a task worker that dies mid-call fails
 * the call with TaskCrashedException.
 *
 * One per process: the supervisor sets where the socket is before it forks the workers (configure()),
 * and each worker makes its client on first use (current()).
 */
final class TaskClient
{
    /** What connect() on a unix socket whose backlog is full fails with (Linux; no sockets extension needed). */
    private const EAGAIN = 11;

    private static ?string $socket = null;

    private static float $defaultTimeout = 60.0;

    private static ?self $current = null;

    private int $inFlight = 0;

    private int $failures = 0;

    private int $calls = 0;

    private function __construct(private readonly string $path) {}

    /** @internal set by the supervisor before it forks the workers (inherited by them) */
    public static function configure(?string $socket, float $defaultTimeout): void
    {
        self::$socket = $socket;
        self::$defaultTimeout = $defaultTimeout;
        self::$current = null;
    }

    /** Whether this process was given task workers (--task-workers). */
    public static function configured(): bool
    {
        return self::$socket !== null;
    }

    public static function current(): self
    {
        if (self::$current !== null && self::$current->path === self::$socket) {
            return self::$current;
        }
        $socket = self::$socket ?? throw new \Error('No task workers run: start the server with --task-workers=N (kiln serve)');
        return self::$current = new self($socket);
    }

    /**
     * Runs $task(...$args) in a task worker; the Future completes with its return value, or fails with a
     * TaskException (TaskFailedException: the task threw).
     *
     * @param string|array{string, string} $task a name registered with App::task(), or [SomeClass::class, 'method']
     * @param list<mixed> $args serialized: closures, resources and the like are refused here (\ValueError)
     * @param ?float $timeout seconds, queue wait included (null: --task-timeout)
     * @return Future<mixed>
     * @throws TaskQueueFullException|TaskUnavailableException at once, before any wait
     */
    public function call(string|array $task, array $args = [], ?float $timeout = null): Future
    {
        $timeout ??= self::$defaultTimeout;
        if (!is_finite($timeout) || $timeout <= 0) {
            throw new \ValueError("A task timeout is a number of seconds above 0, got $timeout");
        }
        $label = TaskCodec::label($task);
        $call = TaskFrames::encode(TaskCodec::encodeCall($task, $args));
        $this->calls++;
        $connection = @stream_socket_client('unix://' . $this->path, $errno, $error, 0, STREAM_CLIENT_CONNECT | STREAM_CLIENT_ASYNC_CONNECT);
        if ($connection === false) {
            $this->failures++;
            if ($errno === self::EAGAIN) {
                throw new TaskQueueFullException("task($label): the task queue is full (--task-queue); try again later");
            }
            throw new TaskUnavailableException("task($label): no task worker can be reached: $error");
        }
        $this->inFlight++;
        return async(function () use ($connection, $call, $label, $timeout): mixed {
            try {
                return $this->exchange($connection, $call, $label, $timeout);
            } catch (TaskException $e) {
                $this->failures++;
                throw $e;
            } finally {
                $this->inFlight--;
                @fclose($connection);
            }
        });
    }

    /** Calls of this worker not answered yet (queued or running). */
    public function inFlight(): int
    {
        return $this->inFlight;
    }

    /** Calls this worker made (refused ones included), and how many failed (queue full, timeout, crash, the task threw). */
    public function calls(): int
    {
        return $this->calls;
    }

    public function failures(): int
    {
        return $this->failures;
    }

    /** @param resource $connection */
    private function exchange(mixed $connection, string $call, string $label, float $timeout): mixed
    {
        $cancellation = new TimeoutCancellation($timeout, "task($label) did not finish within $timeout s");
        $frames = new TaskFrames();
        $pid = null;
        try {
            while (true) {
                $frame = $frames->next();
                if ($frame === null) {
                    $bytes = read($connection, 65536, $cancellation);
                    if ($bytes === null) {
                        throw new TaskCrashedException($pid === null ? "task($label): the task worker closed the connection before taking the call"
                            : "task($label): task worker pid $pid ended during the call");
                    }
                    $frames->feed($bytes);
                    continue;
                }
                if ($pid === null) {
                    $pid = (int) $frame;
                    write($connection, $call, $cancellation);
                    continue;
                }
                return TaskCodec::decodeOutcome($frame, $label);
            }
        } catch (CancelledException $e) {
            if ($pid !== null && $pid > 0) {
                // It is blocked in the task: the one way to get it back is a fresh process.
                @posix_kill($pid, SIGKILL);
            }
            throw new TaskTimeoutException("task($label) did not finish within $timeout s" . ($pid === null ? ' (it waited in the queue)' : "; task worker pid $pid was killed"), 0, $e);
        } catch (StreamException $e) {
            throw new TaskCrashedException("task($label): the connection to task worker pid " . ($pid ?? '?') . " failed: {$e->getMessage()}", 0, $e);
        }
    }
}
