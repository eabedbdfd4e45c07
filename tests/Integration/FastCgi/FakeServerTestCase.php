<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\FastCgi;

use function Kiln\Loop\delay;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Tests\Support\GuardedLoop;
use PHPUnit\Framework\TestCase;

/**
 * Starts tests/Support/FakeFastCgiServer.php (on a free port, or a unix socket) and reads its event log; runs
 * test bodies in a Fiber on a fresh loop under a guard timer; stops the fake by PID.
 */
abstract class FakeServerTestCase extends TestCase
{
    use GuardedLoop;

    /** @var list<array{resource, array<int, resource>}> */
    private array $servers = [];
    private string $events = '';

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
        $this->events = (string) \tempnam(\sys_get_temp_dir(), 'kiln-fake-fcgi-');
    }

    protected function tearDown(): void
    {
        foreach ($this->servers as [$process, $pipes]) {
            \posix_kill(\proc_get_status($process)['pid'], \SIGTERM);
            foreach ($pipes as $pipe) {
                \fclose($pipe);
            }
            \proc_close($process);
        }
        $this->servers = [];
        @\unlink($this->events);
    }

    /** Starts a fake responder; returns its address (`127.0.0.1:PORT`, or `unix:PATH` for $unixPath). */
    protected function startFake(string $scenario = 'echo', ?string $unixPath = null): string
    {
        $command = [\PHP_BINARY, \dirname(__DIR__, 2) . '/Support/FakeFastCgiServer.php', $scenario, $this->events];
        if ($unixPath !== null) {
            $command[] = 'unix:' . $unixPath;
        }
        $process = \proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        self::assertIsResource($process);
        $this->servers[] = [$process, $pipes];
        $read = [$pipes[1]];
        $none = null;
        self::assertSame(1, \stream_select($read, $none, $none, 10), 'The fake FastCGI server did not start within 10 s');
        $line = \trim((string) \fgets($pipes[1]));
        if (\preg_match('/^ready (\d+|unix)$/D', $line, $m) !== 1) {
            self::fail('The fake FastCGI server did not start: ' . $line . \stream_get_contents($pipes[2]));
        }

        return $unixPath !== null ? 'unix:' . $unixPath : '127.0.0.1:' . $m[1];
    }

    /** @return list<string> the fake's event lines so far */
    protected function events(): array
    {
        $content = (string) @\file_get_contents($this->events);

        return $content === '' ? [] : \explode("\n", \rtrim($content, "\n"));
    }

    /** Waits (inside the loop) until the fake logged a line matching $pattern; fails after $timeout seconds. */
    protected function awaitEvent(string $pattern, float $timeout = 5.0): string
    {
        $until = \microtime(true) + $timeout;
        while (true) {
            foreach ($this->events() as $line) {
                if (\preg_match($pattern, $line) === 1) {
                    return $line;
                }
            }
            if (\microtime(true) > $until) {
                self::fail("The fake FastCGI server did not log {$pattern} within {$timeout} s; it logged:\n" . \implode("\n", $this->events()));
            }
            delay(0.01);
        }
    }

    /**
     * Runs $test in a Fiber on the loop; fails if the loop is still busy after $guard seconds.
     *
     * @template T
     *
     * @param \Closure(): T $test
     *
     * @return T
     */
    protected function inLoop(\Closure $test, float $guard = 10.0): mixed
    {
        return $this->runGuarded($test, $guard);
    }

    /**
     * @param array<string, string> $extra
     *
     * @return array<string, string>
     */
    protected static function params(string $method = 'GET', array $extra = []): array
    {
        return ['REQUEST_METHOD' => $method, 'SCRIPT_FILENAME' => '/srv/app.php', 'QUERY_STRING' => 'a=1', 'GATEWAY_INTERFACE' => 'CGI/1.1', ...$extra];
    }
}
