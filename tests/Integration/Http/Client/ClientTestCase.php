<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http\Client;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Tests\Support\GuardedLoop;
use PHPUnit\Framework\TestCase;

/**
 * Starts tests/Fixtures/client/server.php on a free port (it prints the port), runs test bodies in a
 * Fiber on a fresh loop under a guard timer, and stops the server by PID.
 */
abstract class ClientTestCase extends TestCase
{
    use GuardedLoop;

    /** @var resource|null */
    private $process = null;
    /** @var array<int, resource> */
    private array $pipes = [];
    protected int $port = 0;

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
    }

    protected function tearDown(): void
    {
        if ($this->process !== null) {
            $pid = \proc_get_status($this->process)['pid'];
            \posix_kill($pid, \SIGTERM);
            foreach ($this->pipes as $pipe) {
                \fclose($pipe);
            }
            \proc_close($this->process);
            $this->process = null;
        }
    }

    /** @param list<string> $args */
    protected function startServer(array $args = []): string
    {
        $command = [\PHP_BINARY, \dirname(__DIR__, 3) . '/Fixtures/client/server.php', ...$args];
        $process = \proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        self::assertIsResource($process);
        $this->process = $process;
        $this->pipes = $pipes;
        $read = [$pipes[1]];
        $none = null;
        self::assertSame(1, \stream_select($read, $none, $none, 5), 'The test server did not print its port within 5 s');
        $line = \trim((string) \fgets($pipes[1]));
        if (\preg_match('/^\d+$/D', $line) !== 1) {
            self::fail('The test server did not start: ' . $line . \stream_get_contents($pipes[2]));
        }
        $this->port = (int) $line;

        return "http://127.0.0.1:{$this->port}";
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
    protected function inLoop(\Closure $test, float $guard = 5.0): mixed
    {
        return $this->runGuarded($test, $guard);
    }
}
