<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * An independent client program (a python or node script) run by a test: its stdout is read as JSON lines,
 * every wait has a deadline, and the process is killed by its PID when the object goes away.
 */
final class ClientScript
{
    public const PYTHON = '/usr/bin/python3';

    public const NODE = 'node';

    /** @var resource|null */
    private $process;

    /** @var resource */
    private $stdout;

    private string $buffer = '';

    private readonly string $errFile;

    /** @param list<string> $command */
    public function __construct(array $command)
    {
        $this->errFile = (string) tempnam(sys_get_temp_dir(), 'kiln-ws-client-');
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', $this->errFile, 'w']], $pipes);
        if ($process === false) {
            throw new \RuntimeException('cannot start ' . implode(' ', $command));
        }
        $this->process = $process;
        $this->stdout = $pipes[1];
        stream_set_blocking($this->stdout, false);
    }

    /** @param list<string> $args */
    public static function python(string $scenario, string $url, array $args = []): self
    {
        return new self([self::PYTHON, __DIR__ . '/../Fixtures/websocket/client.py', $scenario, $url, ...$args]);
    }

    public static function node(string $scenario, string $url): self
    {
        return new self([self::NODE, __DIR__ . '/../Fixtures/websocket/node/client.js', $scenario, $url]);
    }

    /**
     * The next JSON line the client prints.
     *
     * @return array<string, mixed>
     */
    public function next(float $timeout = 20.0): array
    {
        $deadline = microtime(true) + $timeout;
        while (($end = strpos($this->buffer, "\n")) === false) {
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                throw new \RuntimeException("client printed nothing within {$timeout}s; stderr:\n" . $this->errors());
            }
            $r = [$this->stdout];
            $w = $e = null;
            if (@stream_select($r, $w, $e, 0, (int) min(200_000, $left * 1e6)) < 1) {
                continue;
            }
            $data = (string) fread($this->stdout, 65536);
            if ($data === '' && feof($this->stdout)) {
                throw new \RuntimeException("client ended without a line; stderr:\n" . $this->errors());
            }
            $this->buffer .= $data;
        }
        $line = substr($this->buffer, 0, $end);
        $this->buffer = substr($this->buffer, $end + 1);
        $decoded = json_decode($line, true);
        if (!\is_array($decoded)) {
            throw new \RuntimeException("client printed no JSON: $line");
        }
        /** @var array<string, mixed> $decoded */
        return $decoded;
    }

    public function errors(): string
    {
        return (string) @file_get_contents($this->errFile);
    }

    public function kill(): void
    {
        if ($this->process === null) {
            return;
        }
        $status = proc_get_status($this->process);
        if ($status['running']) {
            posix_kill($status['pid'], SIGKILL);
        }
        proc_close($this->process);
        $this->process = null;
        @unlink($this->errFile);
    }

    public function __destruct()
    {
        $this->kill();
    }
}
