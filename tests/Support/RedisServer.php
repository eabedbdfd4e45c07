<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * A real redis-server (or redis-sentinel) for integration tests: its own temp dir, a free 127.0.0.1
 * port, ready when it answers PING, stopped by PID (TERM, then KILL) at the latest when the object
 * goes away. kill() is a kill -9; restart() starts it again on the same port and directory.
 */
final class RedisServer
{
    /** @var resource|null */
    private mixed $process = null;
    private int $pid = 0;

    /** @param list<string> $options redis.conf directives as command-line arguments (`--requirepass`, `pw`) */
    private function __construct(
        private readonly string $binary,
        public readonly int $port,
        public readonly string $dir,
        private readonly array $options,
        private readonly ?string $password,
    ) {}

    /** @param list<string> $options */
    public static function start(array $options = [], ?string $password = null, ?int $port = null): self
    {
        return self::launch('redis-server', $options, $password, $port);
    }

    /**
     * A Sentinel watching the master at $masterPort as $name (quorum 1, fast failover).
     */
    public static function sentinel(string $name, int $masterPort, ?int $port = null): self
    {
        $port ??= self::freePort();
        $dir = self::tempDir();
        file_put_contents("$dir/sentinel.conf", implode("\n", [
            "port $port",
            'bind 127.0.0.1',
            "dir $dir",
            "sentinel monitor $name 127.0.0.1 $masterPort 1",
            "sentinel down-after-milliseconds $name 1000",
            "sentinel failover-timeout $name 5000",
            "sentinel parallel-syncs $name 1",
            '',
        ]));
        $server = new self(self::binary('redis-sentinel'), $port, $dir, ["$dir/sentinel.conf"], null);
        $server->run();

        return $server;
    }

    /**
     * A node of a Cluster also listens on its port + 10000 (the cluster bus): that one is checked too, and a start
     * that found a port taken meanwhile ("Address already in use") is tried again on other ports, up to three times.
     *
     * @param list<string> $options
     */
    private static function launch(string $binary, array $options, ?string $password, ?int $port): self
    {
        $cluster = \in_array('--cluster-enabled', $options, true);
        for ($try = 1; ; $try++) {
            $server = new self(self::binary($binary), $port ?? self::freePort($cluster), self::tempDir(), $options, $password);
            try {
                $server->run();
                return $server;
            } catch (\RuntimeException $e) {
                if ($port !== null || $try >= 3 || !str_contains($e->getMessage(), 'already in use')) {
                    throw $e;
                }
            }
        }
    }

    /** A free port on 127.0.0.1; with $busPort, one whose port + 10000 is free as well. */
    public static function freePort(bool $busPort = false): int
    {
        for ($try = 0; $try < 50; $try++) {
            $socket = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
            if ($socket === false) {
                throw new \RuntimeException("No free port: $error");
            }
            $name = (string) stream_socket_get_name($socket, false);
            $port = (int) substr($name, strrpos($name, ':') + 1);
            if (!$busPort) {
                fclose($socket);
                return $port;
            }
            $bus = $port + 10000 <= 65535 ? @stream_socket_server('tcp://127.0.0.1:' . ($port + 10000)) : false;
            fclose($socket);
            if ($bus !== false) {
                fclose($bus);
                return $port;
            }
        }
        throw new \RuntimeException('No free port whose port + 10000 is free too');
    }

    public function __destruct()
    {
        $this->stop();
        if (is_dir($this->dir)) {
            $entries = new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($this->dir, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST);
            foreach ($entries as $entry) {
                \assert($entry instanceof \SplFileInfo);
                $entry->isDir() ? @rmdir($entry->getPathname()) : @unlink($entry->getPathname());
            }
            @rmdir($this->dir);
        }
    }

    public function uri(string $path = ''): string
    {
        return ($this->password === null ? 'redis://' : 'redis://:' . rawurlencode($this->password) . '@') . "127.0.0.1:{$this->port}$path";
    }

    public function pid(): int
    {
        return $this->pid;
    }

    /** Runs redis-cli against this server; returns its output, trimmed. */
    public function cli(string ...$args): string
    {
        $command = ['redis-cli', '-h', '127.0.0.1', '-p', (string) $this->port];
        if ($this->password !== null) {
            array_push($command, '--no-auth-warning', '-a', $this->password);
        }
        $process = proc_open([...$command, ...array_values($args)], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        if ($process === false) {
            throw new \RuntimeException('Cannot run redis-cli');
        }
        $out = (string) stream_get_contents($pipes[1]);
        $out .= (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        proc_close($process);

        return trim($out);
    }

    /** kill -9, as a crash would. */
    public function kill(): void
    {
        if ($this->process !== null) {
            posix_kill($this->pid, SIGKILL);
            $this->reap(5.0);
        }
    }

    public function restart(): void
    {
        $this->stop();
        $this->run();
    }

    public function stop(float $timeout = 5.0): void
    {
        if ($this->process === null) {
            return;
        }
        posix_kill($this->pid, SIGTERM);
        if (!$this->reap($timeout)) {
            posix_kill($this->pid, SIGKILL);
            $this->reap(5.0);
        }
    }

    public function log(): string
    {
        return (string) @file_get_contents("$this->dir/server.log");
    }

    private function run(): void
    {
        $isSentinel = str_ends_with($this->binary, 'redis-sentinel');
        $command = $isSentinel
            ? [$this->binary, ...$this->options, '--logfile', "$this->dir/server.log"]
            : [$this->binary, '--port', (string) $this->port, '--bind', '127.0.0.1', '--dir', $this->dir, '--save', '', '--appendonly', 'no',
                '--daemonize', 'no', '--logfile', "$this->dir/server.log", '--protected-mode', 'no', ...$this->options];
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', "$this->dir/stderr.log", 'w']], $pipes);
        if ($process === false) {
            throw new \RuntimeException('Cannot start ' . $this->binary);
        }
        $this->process = $process;
        $this->pid = (int) proc_get_status($process)['pid'];
        $deadline = microtime(true) + 10.0;
        while (microtime(true) < $deadline) {
            if (!proc_get_status($process)['running']) {
                $this->reap(1.0);
                throw new \RuntimeException("{$this->binary} exited at start: " . $this->log() . @file_get_contents("$this->dir/stderr.log"));
            }
            if ($this->answersPing()) {
                return;
            }
            usleep(20_000);
        }
        $this->stop();
        throw new \RuntimeException("{$this->binary} on port {$this->port} did not answer PING within 10 s: " . $this->log());
    }

    private function answersPing(): bool
    {
        $socket = @stream_socket_client("tcp://127.0.0.1:{$this->port}", $errno, $error, 0.5);
        if ($socket === false) {
            return false;
        }
        stream_set_timeout($socket, 1);
        fwrite($socket, "PING\r\n");
        $line = (string) fgets($socket);
        fclose($socket);

        return str_starts_with($line, '+PONG') || str_starts_with($line, '-NOAUTH');
    }

    private function reap(float $timeout): bool
    {
        if ($this->process === null) {
            return true;
        }
        $deadline = microtime(true) + $timeout;
        while (proc_get_status($this->process)['running']) {
            if (microtime(true) > $deadline) {
                return false;
            }
            usleep(10_000);
        }
        proc_close($this->process);
        $this->process = null;

        return true;
    }

    private static function binary(string $name): string
    {
        foreach (['/usr/bin', '/usr/local/bin', '/usr/sbin'] as $dir) {
            if (is_executable("$dir/$name")) {
                return "$dir/$name";
            }
        }

        throw new \RuntimeException("$name is not installed: run scripts/install-deps.sh dev (it installs redis-server, redis-sentinel and redis-tools)");
    }

    private static function tempDir(): string
    {
        $dir = sys_get_temp_dir() . '/kiln-redis-' . getmypid() . '-' . bin2hex(random_bytes(4));
        mkdir($dir, 0o700, true);

        return $dir;
    }
}
