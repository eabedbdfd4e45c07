<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Fork;

use Kiln\Isolation\Fork\ForkServer;
use Kiln\Isolation\Fork\ForkServerProcess;

use function Kiln\Loop\async;
use function Kiln\Loop\delay;

use Kiln\Loop\Loop;
use Kiln\Site\Fork\ScriptChild;
use Kiln\Tests\Unit\Loop\LoopTestCase;

/** The fork server on its own, driven through ForkServerProcess from a Fiber on a fresh loop. */
final class ForkServerTest extends LoopTestCase
{
    private const WWW = __DIR__ . '/fixture/www';

    private ?ForkServerProcess $server = null;

    protected function tearDown(): void
    {
        if ($this->server !== null) {
            $server = $this->server;
            $this->inFiber(static fn() => $server->stop());
            $this->server = null;
        }
    }

    public function testAClientThatGoesAwayGetsItsChildKilled(): void
    {
        $server = $this->server = new ForkServerProcess(ScriptChild::class, 2, 10.0, 0.3, log: self::quiet());
        $file = \sys_get_temp_dir() . '/kiln-fork-abort-' . \getmypid();
        @\unlink($file);
        $pid = $this->inFiber(static function () use ($server, $file): int {
            $response = $server->send(self::params('hang.php', $file));
            $deadline = \microtime(true) + 3;
            while (!\is_file($file) && \microtime(true) < $deadline) {
                delay(0.01);
            }
            $pid = (int) @\file_get_contents($file);
            $response->abort();
            $deadline = \microtime(true) + 3;
            while (self::alive($pid) && \microtime(true) < $deadline) {
                delay(0.02);
            }

            return $pid;
        });
        @\unlink($file);
        self::assertGreaterThan(0, $pid);
        self::assertFalse(self::alive($pid));
    }

    public function testTheServerRefusesPastItsChildrenWithA503(): void
    {
        $server = $this->server = new ForkServerProcess(ScriptChild::class, 1, 10.0, 0.3, log: self::quiet());
        $outcome = $this->inFiber(static function () use ($server): array {
            $slow = $server->send(self::params('slow.php', 's=0.5'));
            $slow->head();
            $refused = $server->send(self::params('state.php'))->head();

            return [$refused->status, $refused->header('retry-after'), \implode('', \iterator_to_array($slow->body(), false))];
        });
        self::assertSame([503, '1', "started\ndone\n"], $outcome);
    }

    public function testADeadServerIsStartedAgainOnTheNextRequest(): void
    {
        $server = $this->server = new ForkServerProcess(ScriptChild::class, 2, 10.0, 0.3, log: self::quiet());
        $statuses = $this->inFiber(static function () use ($server): array {
            $first = $server->send(self::params('state.php'))->head()->status;
            $pid = $server->pid();
            \assert($pid !== null);
            \posix_kill($pid, \SIGKILL);
            while ($server->pid() !== null) {
                delay(0.01);
            }
            $second = $server->send(self::params('state.php'))->head()->status;

            return [$first, $second, $server->pid() !== $pid];
        });
        self::assertSame([200, 200, true], $statuses);
    }

    public function testRequestsArrivingWhileTheServerStartsShareThatStart(): void
    {
        $lines = [];
        $log = static function (string $level, string $message) use (&$lines): void {
            $lines[] = "[$level] $message";
        };
        $server = $this->server = new ForkServerProcess(ScriptChild::class, 8, 10.0, 0.3, log: $log);
        $outcome = $this->inFiber(static function () use ($server): array {
            $requests = [];
            for ($i = 0; $i < 6; $i++) {
                // Each in its own Fiber, all before the server is up: the first one starts it.
                $requests[] = async(static function () use ($server): array {
                    $response = $server->send(self::params('slow.php', 's=0.2'));

                    return [$response->head()->status, \implode('', \iterator_to_array($response->body(), false))];
                });
            }

            return \Kiln\Loop\all($requests);
        }, 20.0);
        self::assertSame(\array_fill(0, 6, [200, "started\ndone\n"]), $outcome);
        $started = \array_values(\array_filter($lines, static fn(string $line): bool => \str_contains($line, ' listening on ')));
        self::assertCount(1, $started, \implode("\n", $lines));
    }

    public function testARequestFindingTheAcceptQueueFullWaitsForRoomInsteadOfRestartingTheServer(): void
    {
        $lines = [];
        $log = static function (string $level, string $message) use (&$lines): void {
            $lines[] = "[$level] $message";
        };
        $limits = \posix_getrlimit();
        $hard = \is_array($limits) && \is_numeric($limits['hard openfiles'] ?? null) ? (int) $limits['hard openfiles'] : 4096;
        $soft = \is_array($limits) && \is_numeric($limits['soft openfiles'] ?? null) ? (int) $limits['soft openfiles'] : 0;
        if ($soft < ForkServer::BACKLOG + 256) {
            \posix_setrlimit(\POSIX_RLIMIT_NOFILE, \min(ForkServer::BACKLOG + 256, $hard), $hard); // the filler sockets below
        }
        $server = $this->server = new ForkServerProcess(ScriptChild::class, 2, 10.0, 0.3, log: $log);
        $outcome = $this->inFiber(static function () use ($server): array {
            self::assertSame(200, $server->send(self::params('state.php'))->head()->status);
            $pid = (int) $server->pid();
            $sockets = \glob(\sys_get_temp_dir() . '/kiln-fork-' . \getmypid() . '-*.sock') ?: [];
            \usort($sockets, static fn(string $a, string $b): int => \filemtime($b) <=> \filemtime($a));
            // A stopped server accepts nothing: its queue fills until a connect fails with EAGAIN. Resumed, it takes
            // them MAX_CONNECTIONS at a time (the test's close as it goes), the waiting request last.
            \posix_kill($pid, \SIGSTOP);
            $filler = [];
            for ($i = 0; $i <= ForkServer::BACKLOG + 1; $i++) {
                $socket = @\stream_socket_client('unix://' . $sockets[0], $errno, $error, 1.0);
                if ($socket === false) {
                    break;
                }
                $filler[] = $socket;
            }
            $full = $socket === false && $errno === 11;
            $waiting = async(static fn(): int => $server->send(self::params('state.php'))->head()->status);
            delay(0.3);
            $stillWaiting = !$waiting->isComplete();
            \posix_kill($pid, \SIGCONT);
            foreach ($filler as $socket) {
                \fclose($socket);
            }

            return [$full, $stillWaiting, $waiting->await(), $server->pid() === $pid];
        }, 20.0);
        self::assertSame([true, true, 200, true], $outcome, \implode("\n", $lines));
    }

    public function testStopEndsTheServerAndItsChildren(): void
    {
        $server = new ForkServerProcess(ScriptChild::class, 2, 10.0, 0.3, log: self::quiet());
        $file = \sys_get_temp_dir() . '/kiln-fork-stop-' . \getmypid();
        @\unlink($file);
        [$serverPid, $childPid] = $this->inFiber(static function () use ($server, $file): array {
            $response = $server->send(self::params('hang.php', $file));
            while (!\is_file($file)) {
                delay(0.01);
            }
            $pids = [(int) $server->pid(), (int) \file_get_contents($file)];
            $server->stop();
            unset($response);

            return $pids;
        });
        @\unlink($file);
        self::assertFalse(self::alive($serverPid));
        self::assertFalse(self::alive($childPid));
    }

    /** @return array<string, string> */
    private static function params(string $script, string $query = ''): array
    {
        return ['SCRIPT_FILENAME' => \realpath(self::WWW) . "/$script", 'SCRIPT_NAME' => "/$script", 'REQUEST_METHOD' => 'GET', 'QUERY_STRING' => $query];
    }

    /** @return \Closure(string, string): void */
    private static function quiet(): \Closure
    {
        return static function (string $level, string $message): void {};
    }

    private static function alive(int $pid): bool
    {
        $stat = @\file_get_contents("/proc/$pid/stat");

        return $stat !== false && \explode(' ', \substr($stat, (int) \strrpos($stat, ')') + 2))[0] !== 'Z';
    }

    /** Runs $fn in a Fiber and the loop until it is done (the server's stderr reader would keep it running). */
    private function inFiber(\Closure $fn, float $guard = 8.0): mixed
    {
        $future = async(static function () use ($fn): mixed {
            try {
                return $fn();
            } finally {
                Loop::defer(static fn() => Loop::stop());
            }
        });
        $this->runGuarded($guard);
        self::assertTrue($future->isComplete(), 'The Fiber did not finish');

        return $future->await();
    }
}
