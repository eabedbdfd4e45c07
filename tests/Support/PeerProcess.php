<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * A peer server (php-fpm, nginx, Apache) run in the foreground for a test: its own session (`setsid`, so a
 * server that signals its process group never hits PHPUnit), stdout+stderr captured to a file in its temp
 * dir, stopped by PID (TERM, wait, then KILL whatever is left of its process tree), temp dir removed.
 *
 * @internal shared by the peer and database server helpers (PhpFpmProcess, NginxProcess, ApacheProcess,
 *           MariaDbServer, PostgresServer)
 */
final class PeerProcess
{
    /** @var resource|null */
    private mixed $process;

    private ?int $exitCode = null;

    private readonly int $pid;

    /** @param resource $process */
    private function __construct(mixed $process, private readonly string $name, private readonly string $outputFile)
    {
        $this->process = $process;
        $this->pid = (int) proc_get_status($process)['pid'];
    }

    /**
     * A fresh temp dir, 0755 so that the peer's unprivileged workers (www-data) can reach sockets and files in it.
     */
    public static function tempDir(string $prefix): string
    {
        $dir = sys_get_temp_dir() . '/' . $prefix . '-' . bin2hex(random_bytes(6));
        if (!mkdir($dir, 0o755) || !chmod($dir, 0o755)) {
            throw new \RuntimeException("cannot create $dir");
        }
        return $dir;
    }

    public static function removeDir(string $dir): void
    {
        if (!is_dir($dir) || is_link($dir)) {
            @unlink($dir);
            return;
        }
        foreach (scandir($dir) ?: [] as $entry) {
            if ($entry !== '.' && $entry !== '..') {
                self::removeDir("$dir/$entry");
            }
        }
        @rmdir($dir);
    }

    /** A port nobody listens on right now (bind 127.0.0.1:0, read it, close). Start retries cover the race. */
    public static function freePort(): int
    {
        $server = @stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        if ($server === false) {
            throw new \RuntimeException("cannot pick a free port: $error");
        }
        $name = (string) stream_socket_get_name($server, false);
        fclose($server);
        return (int) substr($name, (int) strrpos($name, ':') + 1);
    }

    /**
     * Up to three tries of $start on a fresh free port: a try that fails because the port was taken between the
     * pick and the bind ("already in use") is made again; any other failure, or the third, is thrown. $start
     * stops what it launched before it throws.
     *
     * @template T
     *
     * @param \Closure(int): T $start
     *
     * @return T
     */
    public static function onFreePort(\Closure $start): mixed
    {
        for ($attempt = 1; ; $attempt++) {
            try {
                return $start(self::freePort());
            } catch (\RuntimeException $e) {
                if ($attempt >= 3 || !str_contains($e->getMessage(), 'already in use')) {
                    throw $e;
                }
            }
        }
    }

    /**
     * Runs a one-off set-up command (initdb, mariadb-install-db) to its end, for $timeout at most. When it does
     * not exit 0, $dir is removed and the error carries the tail of $log.
     *
     * @param list<string> $command
     */
    public static function runToEnd(string $name, array $command, string $log, string $dir, float $timeout): void
    {
        $setup = self::launch($name, $command, $log);
        $deadline = microtime(true) + $timeout;
        while ($setup->isRunning() && microtime(true) < $deadline) {
            usleep(20_000);
        }
        $code = $setup->exitCode();
        $setup->stop(1.0);
        if ($code !== 0) {
            $tail = self::tail($log);
            self::removeDir($dir);
            throw new \RuntimeException("$name failed (exit " . var_export($code, true) . "):\n$tail");
        }
    }

    public static function isRoot(): bool
    {
        return \function_exists('posix_geteuid') && posix_geteuid() === 0;
    }

    /**
     * @param list<string> $command
     * @param array<string, string>|null $env null: inherit
     */
    public static function launch(string $name, array $command, string $outputFile, ?array $env = null): self
    {
        if (!is_executable($command[0])) {
            throw new \RuntimeException("$name is not installed: {$command[0]} is missing (see scripts/install-deps.sh)");
        }
        $setsid = is_executable('/usr/bin/setsid') ? ['/usr/bin/setsid'] : [];
        $process = proc_open(
            [...$setsid, ...$command],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $outputFile, 'a'], 2 => ['file', $outputFile, 'a']],
            $pipes,
            null,
            $env,
        );
        if ($process === false) {
            throw new \RuntimeException("cannot start $name: " . implode(' ', $command));
        }
        return new self($process, $name, $outputFile);
    }

    public function pid(): int
    {
        return $this->pid;
    }

    public function output(): string
    {
        return (string) @file_get_contents($this->outputFile);
    }

    public function isRunning(): bool
    {
        if ($this->process === null) {
            return false;
        }
        $status = proc_get_status($this->process);
        if (!$status['running']) {
            $this->exitCode ??= $status['exitcode'];
            return false;
        }
        return true;
    }

    public function exitCode(): ?int
    {
        $this->isRunning();
        return $this->exitCode;
    }

    /**
     * Polls $ready until it returns true; throws (with $diagnostics()) when the process exits or time runs out.
     *
     * @param \Closure(): bool $ready
     * @param \Closure(): string $diagnostics
     */
    public function waitUntil(\Closure $ready, float $timeout, string $what, \Closure $diagnostics): void
    {
        $deadline = microtime(true) + $timeout;
        while (!$ready()) {
            if (!$this->isRunning()) {
                throw new \RuntimeException("{$this->name} exited (code {$this->exitCode}) before $what:\n" . $diagnostics());
            }
            if (microtime(true) >= $deadline) {
                throw new \RuntimeException("{$this->name} not ready after {$timeout}s ($what):\n" . $diagnostics());
            }
            usleep(20_000);
        }
    }

    /** TERM the root, wait up to $timeout for it and its descendants, then KILL what is left. Safe twice. */
    public function stop(float $timeout = 5.0): void
    {
        if ($this->process === null) {
            return;
        }
        $tree = self::descendants($this->pid);
        if ($this->isRunning()) {
            posix_kill($this->pid, SIGTERM);
        }
        $deadline = microtime(true) + $timeout;
        while (($this->isRunning() || self::anyAlive($tree)) && microtime(true) < $deadline) {
            usleep(20_000);
        }
        foreach ([$this->pid, ...$tree, ...self::descendants($this->pid)] as $pid) {
            if (self::alive($pid)) {
                posix_kill($pid, SIGKILL);
            }
        }
        proc_close($this->process); // reaps the root
        $this->process = null;
    }

    /** @return list<int> every live process below $root, from /proc ppid links */
    public static function descendants(int $root): array
    {
        $children = [];
        foreach (glob('/proc/[0-9]*/stat') ?: [] as $file) {
            $stat = @file_get_contents($file);
            if ($stat === false || ($close = strrpos($stat, ')')) === false) {
                continue;
            }
            $fields = explode(' ', substr($stat, $close + 2));
            if (($fields[0] ?? 'Z') !== 'Z') {
                $children[(int) ($fields[1] ?? 0)][] = (int) basename(\dirname($file));
            }
        }
        $out = [];
        $queue = [$root];
        while ($queue !== []) {
            foreach ($children[array_shift($queue)] ?? [] as $child) {
                $out[] = $child;
                $queue[] = $child;
            }
        }
        return $out;
    }

    /** @param list<int> $pids */
    private static function anyAlive(array $pids): bool
    {
        foreach ($pids as $pid) {
            if (self::alive($pid)) {
                return true;
            }
        }
        return false;
    }

    /** The process is there and is not a zombie (read from /proc). */
    public static function alive(int $pid): bool
    {
        $stat = @file_get_contents("/proc/$pid/stat");
        if ($stat === false || ($close = strrpos($stat, ')')) === false) {
            return false;
        }
        return ($stat[$close + 2] ?? 'Z') !== 'Z';
    }

    /** True when a TCP or unix-socket connection to $address succeeds (tcp://h:p or unix:///path). */
    public static function canConnect(string $address, float $timeout = 0.5): bool
    {
        $socket = @stream_socket_client($address, $errno, $error, $timeout);
        if ($socket === false) {
            return false;
        }
        fclose($socket);
        return true;
    }

    /**
     * True when $port answers an HTTP request with any status line (a 404 counts: the server is up).
     */
    public static function answersHttp(int $port, float $timeout = 1.0): bool
    {
        $socket = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, $timeout);
        if ($socket === false) {
            return false;
        }
        stream_set_timeout($socket, 0, (int) ($timeout * 1e6));
        fwrite($socket, "GET /.kiln-readiness-probe HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
        $head = (string) fread($socket, 16);
        fclose($socket);
        return str_starts_with($head, 'HTTP/1.');
    }

    /** The last $lines lines of a file, for failure messages. */
    public static function tail(string $file, int $lines = 30): string
    {
        $content = @file_get_contents($file);
        if ($content === false || $content === '') {
            return "($file: empty or missing)";
        }
        return "--- $file\n" . implode("\n", \array_slice(explode("\n", rtrim($content)), -$lines));
    }
}
