<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * A real `kiln serve` process for integration tests: started on a free port, ready when its log says
 * `ready: http://...`, stopped (TERM, then KILL) at the latest when the object goes away.
 */
final class KilnProcess
{
    private const KILN = __DIR__ . '/../../bin/kiln';

    /** @var resource|null */
    private mixed $process;

    private ?int $exitCode = null;

    private string $host = '';

    private int $port = 0;

    private int $pid;

    /** @param resource $process */
    private function __construct(mixed $process, private readonly string $logFile)
    {
        $this->process = $process;
        $this->pid = (int) proc_get_status($process)['pid'];
    }

    /**
     * @param list<string> $args extra `serve` options (later ones win: --workers=4 overrides the default 2)
     * @param array<string, string> $env added to the inherited environment
     */
    public static function start(string $path, array $args = [], array $env = [], float $timeout = 10.0): self
    {
        return self::launch([PHP_BINARY, self::KILN, 'serve', $path, '--listen=127.0.0.1:0', '--workers=2', ...$args], $env, $timeout);
    }

    /**
     * Starts any command that ends up serving (e.g. `php app.php` calling $app->run()) and waits for ready.
     *
     * @param list<string> $command
     * @param array<string, string> $env added to the inherited environment
     */
    public static function launch(array $command, array $env = [], float $timeout = 10.0): self
    {
        $logFile = (string) tempnam(sys_get_temp_dir(), 'kiln-test-log-');
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', $logFile, 'w']], $pipes, null, [...getenv(), ...$env]);
        if ($process === false) {
            throw new \RuntimeException('Cannot start ' . implode(' ', $command));
        }
        $kiln = new self($process, $logFile);
        try {
            $line = $kiln->waitForLog('~ready: http://(\S+):(\d+)~', $timeout);
        } catch (\RuntimeException $e) {
            $kiln->stop(1.0);
            throw new \RuntimeException('kiln did not become ready: ' . $e->getMessage(), 0, $e);
        }
        preg_match('~ready: http://(\S+):(\d+)~', $line, $m);
        $kiln->host = trim($m[1], '[]');
        $kiln->port = (int) $m[2];
        return $kiln;
    }

    /**
     * One-shot CLI call: `php ...$php bin/kiln ...$argv`.
     *
     * @param list<string> $argv
     * @param array<string, string> $env
     * @param list<string> $php options for PHP itself, before the script (`-n`, `-d extension=posix`)
     * @return array{int, string, string} exit code, stdout, stderr
     */
    public static function run(array $argv, float $timeout = 10.0, array $env = [], array $php = []): array
    {
        $out = (string) tempnam(sys_get_temp_dir(), 'kiln-test-out-');
        $err = (string) tempnam(sys_get_temp_dir(), 'kiln-test-err-');
        $process = proc_open([PHP_BINARY, ...$php, self::KILN, ...$argv], [0 => ['file', '/dev/null', 'r'], 1 => ['file', $out, 'w'], 2 => ['file', $err, 'w']], $pipes, null, [...getenv(), ...$env]);
        if ($process === false) {
            throw new \RuntimeException('Cannot run kiln');
        }
        $deadline = microtime(true) + $timeout;
        while (($status = proc_get_status($process))['running'] && microtime(true) < $deadline) {
            usleep(10_000);
        }
        if ($status['running']) {
            proc_terminate($process, SIGKILL);
            proc_close($process);
            $code = -1;
        } else {
            $code = $status['exitcode'];
            proc_close($process);
        }
        $result = [$code, (string) file_get_contents($out), (string) file_get_contents($err)];
        @unlink($out);
        @unlink($err);
        return $result;
    }

    public function port(): int
    {
        return $this->port;
    }

    public function host(): string
    {
        return $this->host;
    }

    public function baseUrl(): string
    {
        return 'http://' . (str_contains($this->host, ':') ? "[{$this->host}]" : $this->host) . ':' . $this->port;
    }

    public function pid(): int
    {
        return $this->pid;
    }

    /** Everything the server wrote to stderr so far. */
    public function log(): string
    {
        return (string) @file_get_contents($this->logFile);
    }

    /** Waits until the log has a line matching $regex and returns that line; throws on timeout or exit. */
    public function waitForLog(string $regex, float $timeout = 5.0): string
    {
        $deadline = microtime(true) + $timeout;
        while (true) {
            foreach (explode("\n", $this->log()) as $line) {
                if (preg_match($regex, $line) === 1) {
                    return $line;
                }
            }
            if (!$this->isRunning()) {
                throw new \RuntimeException("kiln exited (code {$this->exitCode}) before logging $regex; log:\n" . $this->log());
            }
            if (microtime(true) >= $deadline) {
                throw new \RuntimeException("timed out after {$timeout}s waiting for $regex; log:\n" . $this->log());
            }
            usleep(20_000);
        }
    }

    /**
     * The supervisor's live child processes, less the short-lived one that loads the app at start to list its
     * background processes (`kiln: app inspection`), which a loaded machine may still be running when the server is ready.
     *
     * @return list<int>
     */
    public function workerPids(): array
    {
        $pids = [];
        foreach (glob('/proc/[0-9]*/stat') ?: [] as $file) {
            $stat = @file_get_contents($file);
            if ($stat === false || ($close = strrpos($stat, ')')) === false) {
                continue;
            }
            $fields = explode(' ', substr($stat, $close + 2));
            if ((int) ($fields[1] ?? 0) === $this->pid && ($fields[0] ?? '') !== 'Z'
                && !str_starts_with((string) @file_get_contents(\dirname($file) . '/cmdline'), 'kiln: app inspection')) {
                $pids[] = (int) basename(\dirname($file));
            }
        }
        sort($pids);
        return $pids;
    }

    public function signal(int $signal): void
    {
        if ($this->isRunning()) {
            posix_kill($this->pid, $signal);
        }
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

    /** Waits for the process to exit on its own; returns its exit code, or null on timeout. */
    public function waitForExit(float $timeout): ?int
    {
        $deadline = microtime(true) + $timeout;
        while ($this->isRunning()) {
            if (microtime(true) >= $deadline) {
                return null;
            }
            usleep(10_000);
        }
        return $this->exitCode;
    }

    /** TERM, wait up to $timeout, then KILL (workers too). Returns the exit code; safe to call twice. */
    public function stop(float $timeout = 5.0): int
    {
        if ($this->process === null) {
            return $this->exitCode ?? -1;
        }
        $workers = $this->workerPids();
        $this->signal(SIGTERM);
        if ($this->waitForExit($timeout) === null) {
            posix_kill($this->pid, SIGKILL);
            $this->waitForExit(2.0);
            $this->exitCode = -1;
        }
        foreach ($workers as $pid) {
            @posix_kill($pid, SIGKILL); // Orphans must not outlive the test (no-op when they exited).
        }
        proc_close($this->process);
        $this->process = null;
        return $this->exitCode ?? -1;
    }

    public function __destruct()
    {
        $this->stop(2.0);
        @unlink($this->logFile);
    }
}
