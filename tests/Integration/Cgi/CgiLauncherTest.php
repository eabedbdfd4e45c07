<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cgi;

use Kiln\Isolation\Cgi\CgiBusyException;
use Kiln\Isolation\Cgi\CgiLauncher;
use Kiln\Isolation\Cgi\CgiResponseException;
use Kiln\Isolation\Cgi\CgiTimeoutException;

use function Kiln\Loop\async;
use function Kiln\Loop\delay;

use Kiln\Tests\Unit\Loop\LoopTestCase;

/** The CGI process mechanism on its own: real scripts, driven from a Fiber on a fresh loop. */
final class CgiLauncherTest extends LoopTestCase
{
    private const BIN = __DIR__ . '/../../Fixtures/cgi-bin';

    private const ENV = ['PATH' => '/usr/local/bin:/usr/bin:/bin'];

    public function testTheBodyGoesToStdinAndTheResponseComesBackParsed(): void
    {
        $launcher = new CgiLauncher();
        [$head, $body] = $this->inFiber(static function () use ($launcher): array {
            $env = self::ENV + ['REQUEST_METHOD' => 'POST', 'CONTENT_LENGTH' => '5', 'CONTENT_TYPE' => 'text/plain'];
            $process = $launcher->start([self::BIN . '/post.pl'], $env, self::BIN, 'hello');

            return [$process->head(), \implode('', \iterator_to_array($process->body(), false))];
        });
        self::assertSame(200, $head->status);
        self::assertSame("POST text/plain 5\nHELLO", $body);
    }

    public function testABodyStreamIsFedFromWhereItIs(): void
    {
        $launcher = new CgiLauncher();
        $stream = \fopen('php://temp', 'w+b');
        self::assertIsResource($stream);
        $data = \str_repeat('abcdefgh', 40000); // 320 KB: more than a pipe holds
        \fwrite($stream, $data);
        \rewind($stream);
        $body = $this->inFiber(static function () use ($launcher, $stream, $data): string {
            $env = self::ENV + ['REQUEST_METHOD' => 'PUT', 'CONTENT_LENGTH' => (string) \strlen($data), 'CONTENT_TYPE' => 'x/y'];
            $process = $launcher->start([self::BIN . '/post.pl'], $env, self::BIN, $stream);
            $process->head();

            return \implode('', \iterator_to_array($process->body(), false));
        });
        self::assertSame("PUT x/y 320000\n" . \strtoupper($data), $body);
    }

    public function testStderrGoesToTheCallbackAndNoOutputIsMalformed(): void
    {
        $launcher = new CgiLauncher();
        $stderr = '';
        $error = $this->inFiber(static function () use ($launcher, &$stderr): ?string {
            $process = $launcher->start([self::BIN . '/silent.py'], self::ENV, self::BIN, '', static function (string $chunk) use (&$stderr): void {
                $stderr .= $chunk;
            });
            try {
                $process->head();
            } catch (CgiResponseException $e) {
                delay(0.05); // let the stderr Fiber finish

                return $e->getMessage();
            }

            return null;
        });
        self::assertSame('The CGI script wrote nothing', $error);
        self::assertSame("silent.py: nothing to say\n", $stderr);
    }

    public function testATimeoutKillsTheScriptAndEverythingItStarted(): void
    {
        $launcher = new CgiLauncher(timeout: 0.5, killGrace: 0.2);
        $file = \sys_get_temp_dir() . '/kiln-cgi-hang-' . \getmypid() . '.pids';
        @\unlink($file);
        $outcome = $this->inFiber(static function () use ($launcher, $file): array {
            $process = $launcher->start([self::BIN . '/hang.py'], self::ENV + ['QUERY_STRING' => $file], self::BIN);
            try {
                $process->head();

                return ['answered'];
            } catch (CgiTimeoutException) {
                $pids = \array_map('intval', \explode(' ', (string) @\file_get_contents($file)));
                $deadline = \microtime(true) + 3;
                while ($launcher->running() > 0 && \microtime(true) < $deadline) {
                    delay(0.02);
                }

                return ['timeout', $pids, $launcher->running()];
            }
        }, 6.0);
        @\unlink($file);
        self::assertSame('timeout', $outcome[0]);
        self::assertCount(2, $outcome[1], 'hang.py wrote its pid and its child\'s');
        self::assertSame(0, $outcome[2], 'The slot is freed once the script is reaped');
        foreach ($outcome[1] as $pid) {
            self::assertFalse(self::alive($pid), "Process $pid survived the timeout");
        }
    }

    public function testTheConcurrencyBoundRefusesAtOnceAndFreesSlotsAfterExit(): void
    {
        $launcher = new CgiLauncher(maxConcurrent: 1, queueWait: 0);
        $outcome = $this->inFiber(static function () use ($launcher): array {
            $first = $launcher->start([self::BIN . '/slow.py'], self::ENV + ['QUERY_STRING' => '0.3'], self::BIN);
            $refused = false;
            try {
                $launcher->start([self::BIN . '/echo.py'], self::ENV, self::BIN);
            } catch (CgiBusyException) {
                $refused = true;
            }
            $first->head();
            $body = \implode('', \iterator_to_array($first->body(), false));
            while ($launcher->running() > 0) {
                delay(0.01);
            }
            $second = $launcher->start([self::BIN . '/echo.py'], self::ENV, self::BIN);

            return [$refused, $body, $second->head()->status];
        });
        self::assertSame([true, "started\ndone\n", 200], $outcome);
    }

    public function testAStartWhenFullWaitsBrieflyForASlotThatIsBeingFreed(): void
    {
        $launcher = new CgiLauncher(maxConcurrent: 1, queueWait: 1.0);
        $outcome = $this->inFiber(static function () use ($launcher): array {
            $first = $launcher->start([self::BIN . '/slow.py'], self::ENV + ['QUERY_STRING' => '0.2'], self::BIN);
            $reader = async(static function () use ($first): string {
                $first->head();

                return \implode('', \iterator_to_array($first->body(), false));
            });
            $second = $launcher->start([self::BIN . '/echo.py'], self::ENV, self::BIN);
            $third = null;
            try {
                $launcher->start([self::BIN . '/echo.py'], self::ENV, self::BIN);
            } catch (CgiBusyException) {
                $third = 'busy';
            }

            return [$reader->await(), $first->exitCode(), $second->head()->status, $third];
        });
        self::assertSame(["started\ndone\n", 0, 200, 'busy'], $outcome, 'the second waited for the first; the third waited past queueWait');
    }

    public function testCloseKillsAndWaitsUntilTheSlotIsFree(): void
    {
        $launcher = new CgiLauncher(maxConcurrent: 1);
        $outcome = $this->inFiber(static function () use ($launcher): array {
            $process = $launcher->start([self::BIN . '/slow.py'], self::ENV + ['QUERY_STRING' => '30'], self::BIN);
            $process->head();
            $process->close();

            return [$launcher->running(), $process->exitCode(), self::alive($process->pid())];
        });
        self::assertSame([0, 128 + \SIGTERM, false], $outcome);
    }

    public function testAbandoningTheBodyKillsTheScript(): void
    {
        $launcher = new CgiLauncher();
        $pid = $this->inFiber(static function () use ($launcher): int {
            $process = $launcher->start([self::BIN . '/slow.py'], self::ENV + ['QUERY_STRING' => '30'], self::BIN);
            $process->head();
            $body = $process->body();
            self::assertSame("started\n", $body->current());
            $pid = $process->pid();
            unset($body, $process);
            while ($launcher->running() > 0) {
                delay(0.01);
            }

            return $pid;
        });
        self::assertFalse(self::alive($pid));
    }

    public function testAProgramThatCannotBeExecutedIsAMalformedResponse(): void
    {
        $launcher = new CgiLauncher();
        $this->expectException(CgiResponseException::class);
        $this->inFiber(static fn(): mixed => $launcher->start([self::BIN . '/not-executable.sh'], self::ENV, self::BIN)->head());
    }

    private static function alive(int $pid): bool
    {
        $stat = @\file_get_contents("/proc/$pid/stat");
        if ($stat === false) {
            return false;
        }
        $state = \explode(' ', \substr($stat, (int) \strrpos($stat, ')') + 2))[0];

        return $state !== 'Z';
    }

    private function inFiber(\Closure $fn, float $guard = 5.0): mixed
    {
        $future = async($fn);
        $this->runGuarded($guard);
        self::assertTrue($future->isComplete(), 'The Fiber did not finish');

        return $future->await();
    }
}
