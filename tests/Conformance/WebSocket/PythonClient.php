<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\WebSocket;

use PHPUnit\Framework\Assert;

/**
 * python_client.py as a child process, spoken to one JSON line at a time, every read with a timeout.
 */
final class PythonClient
{
    private const TIMEOUT = 20.0;

    /** @var resource */
    private $process;

    /** @var array<int, resource> */
    private array $pipes;

    private string $pending = '';

    /** @param array<string, mixed> $scenario */
    public function __construct(string $python, string $script, array $scenario)
    {
        Assert::assertFileExists($python, 'python3 from Debian is needed (scripts/install-deps.sh installs it)');
        $process = proc_open(
            [$python, $script],
            [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
        );
        Assert::assertIsResource($process);
        $this->process = $process;
        $this->pipes = $pipes;
        stream_set_blocking($this->pipes[1], false);
        stream_set_blocking($this->pipes[2], false);
        // On stdin, not in argv: one argument may not exceed 128 KiB on Linux.
        fwrite($this->pipes[0], json_encode($scenario, \JSON_THROW_ON_ERROR) . "\n");
    }

    /** The bytes the client sends next. */
    public function expectSend(): string
    {
        $line = $this->report();
        Assert::assertArrayHasKey('send', $line);
        Assert::assertIsString($line['send']);
        return (string) hex2bin($line['send']);
    }

    public function receive(string $bytes): void
    {
        fwrite($this->pipes[0], json_encode(['recv' => bin2hex($bytes)], \JSON_THROW_ON_ERROR) . "\n");
        fflush($this->pipes[0]);
    }

    /** @return array<string, mixed> the next line the client writes */
    public function report(): array
    {
        $deadline = microtime(true) + self::TIMEOUT;
        while (!str_contains($this->pending, "\n")) {
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                Assert::fail('python_client.py said nothing for ' . self::TIMEOUT . ' s; stderr: ' . $this->stderr());
            }
            $read = [$this->pipes[1]];
            $write = $except = null;
            if (stream_select($read, $write, $except, (int) $left, (int) (fmod($left, 1.0) * 1e6)) > 0) {
                $chunk = fread($this->pipes[1], 65536);
                if ($chunk === '' || $chunk === false) {
                    if (feof($this->pipes[1])) {
                        Assert::fail('python_client.py ended; stderr: ' . $this->stderr());
                    }
                    continue;
                }
                $this->pending .= $chunk;
            }
        }
        [$line, $this->pending] = explode("\n", $this->pending, 2);
        $decoded = json_decode($line, true, 512, \JSON_THROW_ON_ERROR);
        Assert::assertIsArray($decoded);
        /** @var array<string, mixed> $decoded */
        return $decoded;
    }

    public function stop(): void
    {
        foreach ($this->pipes as $pipe) {
            if (\is_resource($pipe)) {
                fclose($pipe);
            }
        }
        $status = proc_get_status($this->process);
        if ($status['running']) {
            proc_terminate($this->process);
        }
        proc_close($this->process);
    }

    private function stderr(): string
    {
        stream_set_blocking($this->pipes[2], true);
        return (string) stream_get_contents($this->pipes[2]);
    }
}
