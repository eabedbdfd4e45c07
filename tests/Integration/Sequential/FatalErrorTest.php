<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

/** A fatal error ends its worker with a 500; an uncaught exception is a 500 the worker survives. */
final class FatalErrorTest extends SequentialTestCase
{
    public function testAFatalErrorIsA500AndTheServerKeepsServing(): void
    {
        $pid = $this->workerPid();
        $response = $this->get('/fatal.php');
        self::assertSame(500, $response['status']);
        self::assertSame(['close'], $response['headers']['connection']);
        $this->waitForReplacement($pid);
        self::assertSame(200, $this->get('/pid.php')['status']);
        self::assertStringContainsString('fatal error: a fatal error on purpose', $this->server()->log());
    }

    public function testARedeclaredFunctionOnTheSecondRequestIsA500AndTheNextWorkerServesIt(): void
    {
        $first = $this->get('/redeclare.php');
        self::assertSame(200, $first['status']);
        self::assertSame('declared', $first['body']);
        $pid = $this->workerPid();
        self::assertSame(500, $this->get('/redeclare.php')['status'], 'the function is still declared in this worker');
        $this->waitForReplacement($pid);
        self::assertSame('declared', $this->get('/redeclare.php')['body'], 'a fresh worker declares it again');
        self::assertStringContainsString('Cannot redeclare kiln_sequential_declared_once()', $this->server()->log());
    }

    public function testAFatalErrorInOneWorkerLeavesTheOthersServing(): void
    {
        $this->startServer([], 2);
        $before = $this->server()->workerPids();
        self::assertCount(2, $before);
        self::assertSame(500, $this->get('/fatal.php')['status']);
        $deadline = microtime(true) + 10.0;
        while (\count(array_intersect($before, $this->server()->workerPids())) !== 1 && microtime(true) < $deadline) {
            usleep(20_000);
        }
        self::assertCount(1, array_intersect($before, $this->server()->workerPids()), 'exactly one worker was replaced');
        for ($i = 0; $i < 4; $i++) {
            self::assertSame(200, $this->get('/pid.php')['status']);
        }
    }

    public function testAnUncaughtExceptionIsA500WithWhatWasPrintedAndTheWorkerServesOn(): void
    {
        $pid = $this->workerPid();
        $response = $this->get('/uncaught.php');
        self::assertSame(500, $response['status']);
        self::assertSame('before the exception;', $response['body'], 'display_errors is off: what was printed, no message');
        self::assertSame($pid, $this->workerPid());
        self::assertStringContainsString('PHP Fatal error:  Uncaught RuntimeException: nobody caught this', $this->server()->log());
    }

    public function testTheScriptsExceptionHandlerGetsItsUncaughtException(): void
    {
        $response = $this->get('/handler.php');
        self::assertSame(503, $response['status']);
        self::assertSame('handled: to the handler', $response['body']);
        $after = self::json($this->get('/handlers.php'));
        self::assertTrue($after['exception'], 'the handler does not outlive its request');
    }

    public function testAnUncaughtErrorAfterPartOfTheDeclarationsReplacesTheWorkerSoTheNextRequestDoesNotRedeclare(): void
    {
        $pid = $this->workerPid();
        self::assertSame(500, $this->get('/half/page.php?fail=1')['status']);
        $this->waitForReplacement($pid);
        $next = $this->get('/half/page.php');
        self::assertSame([200, 'ready'], [$next['status'], $next['body']], $this->server()->log());
        $log = $this->server()->log();
        self::assertStringNotContainsString('Cannot redeclare', $log);
        self::assertStringContainsString('/half/page.php stopped on an uncaught Error', $log);
    }

    public function testTheLogOfAnUncaughtErrorShowsTheScriptsFramesNotKilnsOwn(): void
    {
        self::assertSame(500, $this->get('/half/page.php?fail=1')['status']);
        $this->server()->waitForLog('~\{main\}~', 5.0);
        $log = $this->server()->log();
        $entry = substr($log, (int) strpos($log, 'PHP Fatal error:  Uncaught Error: Call to undefined function kiln_half_no_such_function()'));
        self::assertMatchesRegularExpression(
            '~^PHP Fatal error:  Uncaught Error: Call to undefined function kiln_half_no_such_function\(\) in \S+/half/functions\.php:12\n'
            . 'Stack trace:\n#0 \S+/half/page\.php\(9\): kiln_half_fail\(\)\n#1 \{main\}\n  thrown in \S+/half/functions\.php on line 12~',
            $entry,
        );
        self::assertStringNotContainsString('SequentialRunner', $log, 'no frame of Kiln\'s own');
    }
}
