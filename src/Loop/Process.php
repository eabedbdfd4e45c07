<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Internal\StreamIo;

/**
 * A child process with non-blocking pipes: reads, writes and join() suspend the calling Fiber, never
 * the worker. The exit is noticed by polling proc_get_status() on a short timer (1 ms doubling to
 * 50 ms), not by SIGCHLD, so the server's own child handling is left alone.
 *
 * - A string command runs through `sh -c`: pid(), signal() and kill() then address the shell. Prefer
 *   a list, which is executed directly (a missing program exits 127, like a shell).
 * - A cancelled join() or run() terminates the child: SIGTERM, SIGKILL after TERM_GRACE seconds, then
 *   reaps it. Signals reach the child only, not processes it started in turn.
 * - A Process destroyed while its child runs kills the child and reaps it in the background.
 */
final class Process
{
    public const TERM_GRACE = 1.0;
    private const POLL_MIN = 0.001;
    private const POLL_MAX = 0.05;

    private ?int $exitCode = null;

    /**
     * @param resource $handle
     * @param array<int, resource|null> $pipes 0: the child's stdin, 1: stdout, 2: stderr (null once closed)
     */
    private function __construct(private readonly mixed $handle, private array $pipes, private readonly int $pid) {}

    public function __destruct()
    {
        foreach ($this->pipes as $pipe) {
            if (\is_resource($pipe)) {
                \fclose($pipe);
            }
        }
        if ($this->poll()) {
            \proc_close($this->handle);

            return;
        }
        \proc_terminate($this->handle, \SIGKILL);
        $handle = $this->handle;
        Loop::unreference(Loop::repeat(self::POLL_MAX, static function (string $id) use ($handle): void {
            if (!\proc_get_status($handle)['running']) {
                Loop::cancel($id);
                \proc_close($handle);
            }
        }));
    }

    /**
     * @param list<string>|string $command
     * @param array<string, string>|null $env null: inherit the worker's environment
     *
     * @throws ProcessException
     */
    public static function start(array|string $command, ?string $cwd = null, ?array $env = null): self
    {
        if ($command === [] || $command === '') {
            throw new \ValueError('Process::start() needs a command');
        }
        $spec = [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']];
        $handle = @\proc_open($command, $spec, $pipes, $cwd, $env);
        if ($handle === false) {
            $shown = \is_array($command) ? \implode(' ', $command) : $command;
            throw new ProcessException("Cannot start `$shown`: " . (\error_get_last()['message'] ?? 'proc_open() failed'));
        }
        foreach ($pipes as $pipe) {
            \stream_set_blocking($pipe, false);
        }

        // proc_get_status() reports a child's exit code once only, on the call that finds it gone: a program that
        // exits at once (a missing one: 127) may already be gone here, so what this call saw is kept.
        $status = \proc_get_status($handle);
        $process = new self($handle, $pipes, $status['pid']);
        if (!$status['running']) {
            $process->exitCode = $status['signaled'] ? 128 + $status['termsig'] : $status['exitcode'];
        }

        return $process;
    }

    /**
     * Runs $command to its end, feeding it $input and collecting stdout and stderr concurrently (a child
     * filling one pipe while we wait on the other cannot deadlock). A non-zero exit is not an error.
     *
     * @param list<string>|string $command
     * @param array<string, string>|null $env
     *
     * @throws ProcessException|StreamException|CancelledException (cancelled: the child is terminated first)
     */
    public static function run(array|string $command, string $input = '', ?Cancellation $cancellation = null, ?string $cwd = null, ?array $env = null): ProcessResult
    {
        $process = self::start($command, $cwd, $env);
        $feed = static function () use ($process, $input, $cancellation): void {
            try {
                $process->write($input, $cancellation);
            } catch (StreamException) {
                // The child closed its stdin without reading everything: its business, not a failure.
            } finally {
                $process->closeStdin();
            }
        };
        try {
            $stdout = async(static fn(): string => self::collect($process->readStdout(...), $cancellation));
            $stderr = async(static fn(): string => self::collect($process->readStderr(...), $cancellation));
            all([$stdout, $stderr, async($feed)], $cancellation);
            $exitCode = $process->join($cancellation);
        } catch (\Throwable $e) {
            $process->terminate();
            throw $e;
        }

        return new ProcessResult($exitCode, $stdout->await(), $stderr->await());
    }

    public function pid(): int
    {
        return $this->pid;
    }

    public function isRunning(): bool
    {
        return !$this->poll();
    }

    /** @throws StreamException when stdin is closed (by closeStdin() or by the child) */
    public function write(string $data, ?Cancellation $cancellation = null): void
    {
        $stdin = $this->pipes[0] ?? null;
        if ($stdin === null) {
            throw new StreamException('The stdin of the process is closed');
        }
        StreamIo::write($stdin, $data, $cancellation);
    }

    public function closeStdin(): void
    {
        $this->closePipe(0);
    }

    /** The next chunk of the child's stdout; null at end of output. */
    public function readStdout(?Cancellation $cancellation = null): ?string
    {
        return $this->readPipe(1, $cancellation);
    }

    /** The next chunk of the child's stderr; null at end of output. */
    public function readStderr(?Cancellation $cancellation = null): ?string
    {
        return $this->readPipe(2, $cancellation);
    }

    /**
     * Waits for the child to exit and returns its exit code (128 + signal number if a signal ended it,
     * -1 if someone else reaped it). Cancelled: terminates the child, then throws.
     *
     * @throws CancelledException
     */
    public function join(?Cancellation $cancellation = null): int
    {
        try {
            $this->waitForExit(\INF, $cancellation);
        } catch (CancelledException $e) {
            $this->terminate();
            throw $e;
        }
        \assert($this->exitCode !== null);

        return $this->exitCode;
    }

    /** Sends $signal to the child; a no-op once it has exited. */
    public function signal(int $signal): void
    {
        if (!$this->poll()) {
            \proc_terminate($this->handle, $signal);
        }
    }

    public function kill(): void
    {
        $this->signal(\SIGKILL);
    }

    /** @param \Closure(?Cancellation): ?string $read */
    private static function collect(\Closure $read, ?Cancellation $cancellation): string
    {
        $data = '';
        while (($chunk = $read($cancellation)) !== null) {
            $data .= $chunk;
        }

        return $data;
    }

    /** SIGTERM, SIGKILL after TERM_GRACE seconds, and waits until the child is reaped. */
    private function terminate(): void
    {
        $this->signal(\SIGTERM);
        if (!$this->waitForExit(self::TERM_GRACE, null)) {
            $this->kill();
            $this->waitForExit(\INF, null);
        }
    }

    /** @return bool whether the child exited within $seconds */
    private function waitForExit(float $seconds, ?Cancellation $cancellation): bool
    {
        $deadline = \hrtime(true) / 1e9 + $seconds;
        $interval = self::POLL_MIN;
        while (!$this->poll()) {
            $left = $deadline - \hrtime(true) / 1e9;
            if ($left <= 0) {
                return false;
            }
            delay(\min($interval, $left), $cancellation);
            $interval = \min($interval * 2, self::POLL_MAX);
        }

        return true;
    }

    /** @return bool whether the child has exited (and been reaped) */
    private function poll(): bool
    {
        if ($this->exitCode !== null) {
            return true;
        }
        $status = \proc_get_status($this->handle);
        if ($status['running']) {
            return false;
        }
        $this->exitCode = $status['signaled'] ? 128 + $status['termsig'] : $status['exitcode'];

        return true;
    }

    private function readPipe(int $fd, ?Cancellation $cancellation): ?string
    {
        $pipe = $this->pipes[$fd] ?? null;
        if ($pipe === null) {
            return null;
        }
        $chunk = StreamIo::read($pipe, 65536, $cancellation);
        if ($chunk === null) {
            $this->closePipe($fd);
        }

        return $chunk;
    }

    private function closePipe(int $fd): void
    {
        $pipe = $this->pipes[$fd] ?? null;
        $this->pipes[$fd] = null;
        if (\is_resource($pipe)) {
            \fclose($pipe);
        }
    }
}
