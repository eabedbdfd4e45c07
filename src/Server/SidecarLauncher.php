<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Server\Internal\StderrPipe;

/** The process side of Sidecars: finding the program, fork + exec with a clean descriptor table, the readiness probe. */
final class SidecarLauncher
{
    /** Whether something accepts connections on the unix socket (a unix connect() answers at once). */
    public static function listening(string $socket): bool
    {
        if (!file_exists($socket)) {
            return false;
        }
        $connection = @stream_socket_client('unix://' . $socket, $errno, $error, 0.05);
        if ($connection === false) {
            return false;
        }
        fclose($connection);
        return true;
    }

    public static function resolve(string $program, string $path): ?string
    {
        $candidates = str_contains($program, '/') ? [$program] : array_map(
            static fn(string $dir): string => rtrim($dir === '' ? '.' : $dir, '/') . '/' . $program,
            explode(':', $path),
        );
        foreach ($candidates as $candidate) {
            if (is_file($candidate) && is_executable($candidate)) {
                return $candidate;
            }
        }
        return null;
    }

    /**
     * What puts a program under Linux's SCHED_BATCH policy here: `chrt -b 0` (util-linux's, or BusyBox's, which
     * takes the short options only), tried on `true`, since a container's seccomp policy may forbid
     * sched_setscheduler(). Else why it cannot: a string, or null when the try itself could not be made now
     * (proc_open() failed: try again later).
     *
     * @return non-empty-list<string>|string|null the prefix for the command, why there is none, or null
     */
    public static function batchPrefix(string $path): array|string|null
    {
        $chrt = self::resolve('chrt', $path);
        if ($chrt === null) {
            return 'chrt (util-linux) is not in PATH';
        }
        if (!\function_exists('proc_open')) {
            return 'proc_open() is disabled (disable_functions), so chrt cannot be tried';
        }
        $prefix = [$chrt, '-b', '0'];
        // It inherits this process's other descriptors for the few milliseconds it runs (proc_open() does not
        // close them): it reads and accepts nothing on them.
        $process = @proc_open([...$prefix, self::resolve('true', $path) ?? '/bin/true'], [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['pipe', 'w']], $pipes);
        if (!\is_resource($process)) {
            return null;
        }
        $error = trim((string) stream_get_contents($pipes[2]));
        fclose($pipes[2]);
        $code = proc_close($process);
        return $code === 0 ? $prefix : "`$chrt -b 0` failed" . ($error !== '' ? ': ' . strtok($error, "\n") : " (exit code $code)");
    }

    /**
     * fork + exec. The child keeps only descriptors 0–2: every other stream this process holds (listening
     * sockets, worker channels, log files) is closed first, so a sidecar never keeps the port or a channel open.
     * With $stderr its fd 2 is that pipe's write end (StderrRelay); the caller closes the pipe's ends it holds.
     *
     * @param list<string> $args
     * @param array<string, string> $env
     */
    public static function start(string $program, array $args, array $env, ?StderrPipe $stderr = null): int
    {
        $pid = pcntl_fork();
        if ($pid === -1) {
            throw new ServerException('fork failed: ' . pcntl_strerror(pcntl_get_last_error()));
        }
        if ($pid > 0) {
            return $pid;
        }
        $stderr?->becomeStderr();
        // A process group of its own, so that what it forks (php-cgi's children) ends with it: every stop
        // signals the group (-pid), and a worker whose supervisor was killed does the same.
        posix_setsid();
        foreach ([SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD, SIGALRM] as $signal) {
            pcntl_signal($signal, SIG_DFL);
        }
        // What a terminal sends the whole process group (^C, ^\, hang-up) is for the supervisor to act on:
        // a sidecar ends when the supervisor says so (TERM, KILL). Ignored dispositions survive exec.
        foreach ([SIGINT, SIGQUIT, SIGHUP] as $signal) {
            pcntl_signal($signal, SIG_IGN);
        }
        // USR1 and USR2 reach a sidecar only by accident (`systemctl kill -s USR1` signals every process of the
        // service), and php-cgi cannot take them: it installs its own USR1 handler whatever the disposition, one
        // that marks the process as shutting down, and its parent then forks children that inherit the mark and
        // exit at once, for ever; USR2 ends it. Blocked, they stay pending and do nothing: the mask survives exec
        // and fork, and php-cgi never unblocks them.
        pcntl_sigprocmask(SIG_BLOCK, [SIGUSR1, SIGUSR2]);
        $stdio = [];
        for ($fd = 0; $fd <= 2; $fd++) {
            $stat = @stat("/proc/self/fd/$fd");
            if ($stat !== false) {
                $stdio[] = $stat['dev'] . ':' . $stat['ino'];
            }
        }
        foreach (get_resources('stream') as $stream) {
            $stat = @fstat($stream);
            if ($stat === false || !\in_array($stat['dev'] . ':' . $stat['ino'], $stdio, true)) {
                @fclose($stream);
            }
        }
        @pcntl_exec($program, $args, $env);
        // Never run this process's shutdown code (pid file removal, destructors) in the child.
        posix_kill(posix_getpid(), SIGKILL);
        exit(127);
    }
}
