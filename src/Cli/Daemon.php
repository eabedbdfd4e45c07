<?php

declare(strict_types=1);

namespace Kiln\Cli;

use Kiln\Loop\StreamPoll;
use Kiln\Server\StandardError;

/**
 * `--daemon`: double fork and setsid, stdin and stdout to /dev/null, stderr to the error log. The process that ran `kiln serve` waits until
 * the daemon says it serves (where, its pid and files on stdout, exit 0) or why it could not start (the
 * reason on stderr, exit 1).
 */
final class Daemon
{
    /** @var resource|null the daemon's end of the line back to the launching process */
    private mixed $channel = null;

    /**
     * The /dev/null descriptors standing in for stdio: held so they stay open for the process's life.
     *
     * @var list<resource|false>
     * @phpstan-ignore property.onlyWritten
     */
    private array $stdio = [];

    /**
     * @param resource $stderr
     * @param resource|null $stdout where the launcher says where the daemon serves; null: STDOUT
     * @param string|null $errorLog the daemon's standard error, appended to (PHP writes its own warnings and fatal
     *        errors there); null, or a file that cannot be opened: /dev/null
     * @return int|null the launcher's exit code in the launching process; null in the daemon
     */
    public function detach(mixed $stderr, float $timeout = 120.0, mixed $stdout = null, ?string $errorLog = null): ?int
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        if ($pair === false || ($pid = pcntl_fork()) === -1) {
            fwrite($stderr, "kiln: cannot fork to start the daemon\n");
            return 1;
        }
        if ($pid > 0) {
            fclose($pair[1]);
            return $this->waitForDaemon($pair[0], $pid, $stderr, $timeout, $stdout ?? STDOUT);
        }
        fclose($pair[0]);
        posix_setsid();
        if (pcntl_fork() !== 0) {
            exit(0); // The session leader leaves; its child can never regain a terminal.
        }
        $this->channel = $pair[1];
        fclose(STDIN);
        fclose(STDOUT);
        // The lowest free descriptors are 0 and 1: they now point at /dev/null.
        $this->stdio = [fopen('/dev/null', 'r'), fopen('/dev/null', 'w')];
        // Standard error becomes the error log in place (dup2), so the C library's stderr, where PHP writes its own
        // warnings and fatal errors, and the STDERR constant stay usable. Closing STDERR would close that stderr too:
        // PHP's messages would go nowhere, and a script's fwrite(STDERR, ...) would fail. Without FFI, as before.
        if (!StandardError::appendTo($errorLog ?? '/dev/null')) {
            fclose(STDERR);
            $this->stdio[] = ($errorLog === null ? false : @fopen($errorLog, 'a')) ?: fopen('/dev/null', 'w');
        }
        return null;
    }

    /** @param string $summary what the launcher prints on its stdout (where, pid, files) */
    public function ready(string $summary = ''): void
    {
        $this->tell('ready ' . str_replace("\n", ' ', $summary) . "\n");
    }

    public function failed(string $reason): void
    {
        $this->tell('failed ' . str_replace("\n", ' ', $reason) . "\n");
    }

    private function tell(string $line): void
    {
        if (\is_resource($this->channel)) {
            @fwrite($this->channel, $line);
            fclose($this->channel);
        }
        $this->channel = null;
    }

    /**
     * @param resource $channel
     * @param resource $stderr
     * @param resource $stdout
     */
    private function waitForDaemon(mixed $channel, int $pid, mixed $stderr, float $timeout, mixed $stdout): int
    {
        pcntl_waitpid($pid, $status);
        $line = '';
        $deadline = microtime(true) + $timeout;
        $poll = new StreamPoll(); // a shell may hand kiln descriptors numbered past stream_select()'s 1024
        while (!str_contains($line, "\n") && ($left = $deadline - microtime(true)) > 0) {
            if ($poll->wait([$channel], [], $left) !== null) {
                $chunk = fread($channel, 4096);
                if ($chunk === false || $chunk === '') {
                    break;
                }
                $line .= $chunk;
            }
        }
        $line = trim($line);
        if ($line === 'ready' || str_starts_with($line, 'ready ')) {
            $summary = trim(substr($line, 5));
            if ($summary !== '') {
                @fwrite($stdout, "kiln: $summary\n"); // a closed stdout (>&-) is no failure of the start
            }
            return 0;
        }
        $reason = str_starts_with($line, 'failed ') ? substr($line, 7) : 'the daemon exited before it was ready (see its error log)';
        fwrite($stderr, "kiln: $reason\n");
        return 1;
    }
}
