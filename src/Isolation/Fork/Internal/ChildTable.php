<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork\Internal;

/**
 * @internal The fork server's running children: each in its own process group, SIGTERM at its deadline
 * (the time limit, or at once when its client left), SIGKILL $killGrace seconds later, reaped without
 * blocking on SIGCHLD.
 */
final class ChildTable
{
    /** @var array<int, ServerConnection> by pid */
    private array $children = [];

    public function __construct(private readonly float $killGrace) {}

    public function add(int $pid, ServerConnection $conn, float $deadline): void
    {
        $conn->child = $pid;
        $conn->deadline = $deadline;
        $this->children[$pid] = $conn;
    }

    public function count(): int
    {
        return \count($this->children);
    }

    /** In a new child: forgets its siblings (without signalling them). */
    public function forget(): void
    {
        $this->children = [];
    }

    /**
     * Reaps every child that exited. What a child that ended by itself left running in its group (a program its
     * script started in the background, as `exec('cmd > /dev/null &')`) keeps running, as under php-fpm; the
     * group of a child that was stopped for its time limit, or died from a signal, is killed with it (a command
     * it was still waiting for).
     *
     * @param \Closure(ServerConnection): void $gone
     */
    public function reap(\Closure $gone): void
    {
        $status = 0;
        while (($pid = \pcntl_waitpid(-1, $status, \WNOHANG)) > 0) {
            $conn = $this->children[$pid] ?? null;
            unset($this->children[$pid]);
            if ($conn === null) {
                continue;
            }
            $status = \is_int($status) ? $status : 0;
            $signalled = \pcntl_wifsignaled($status);
            if ($signalled && $conn->termSent === null) {
                \fwrite(\STDERR, "fork server: child $pid for " . self::describe($conn) . ' was killed by signal ' . \pcntl_wtermsig($status) . "\n");
            }
            if ($signalled || $conn->termSent !== null) {
                @\posix_kill(-$pid, \SIGKILL);
            }
            $gone($conn);
        }
    }

    public function enforceLimits(): void
    {
        $now = \microtime(true);
        foreach ($this->children as $pid => $conn) {
            if ($conn->termSent === null && $now >= $conn->deadline) {
                $conn->termSent = $now;
                @\posix_kill(-$pid, \SIGTERM);
            } elseif ($conn->termSent !== null && $now >= $conn->termSent + $this->killGrace) {
                @\posix_kill(-$pid, \SIGKILL);
            }
        }
    }

    /** Seconds until enforceLimits() has something to do (at most 1), null when nothing runs. */
    public function nextWait(): ?float
    {
        $next = null;
        foreach ($this->children as $conn) {
            $at = $conn->termSent === null ? $conn->deadline : $conn->termSent + $this->killGrace;
            $next = $next === null ? $at : \min($next, $at);
        }

        return $next === null ? null : \max(0.0, \min($next - \microtime(true), 1.0));
    }

    /**
     * TERM to every group, KILL after the grace period, every child reaped.
     *
     * @param \Closure(ServerConnection): void $gone
     */
    public function stopAll(\Closure $gone): void
    {
        foreach ($this->children as $pid => $conn) {
            $conn->termSent = \microtime(true);
            @\posix_kill(-$pid, \SIGTERM);
        }
        $deadline = \microtime(true) + $this->killGrace;
        while ($this->children !== [] && \microtime(true) < $deadline) {
            \usleep(10_000);
            $this->reap($gone);
        }
        foreach ($this->children as $pid => $conn) {
            @\posix_kill(-$pid, \SIGKILL);
            $status = 0;
            \pcntl_waitpid($pid, $status);
            unset($this->children[$pid]);
            $gone($conn);
        }
    }

    private static function describe(ServerConnection $conn): string
    {
        $params = $conn->parser->params() ?? [];

        return ($params['REQUEST_METHOD'] ?? '?') . ' ' . ($params['REQUEST_URI'] ?? '?');
    }
}
