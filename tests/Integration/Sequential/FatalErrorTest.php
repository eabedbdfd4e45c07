<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use PHPUnit\Framework\Attributes\DataProvider;

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

    /** @return array<string, array{string, string}> */
    public static function unguardedDeclarations(): array
    {
        return [
            'a function' => ['/redeclare.php', 'declared'],
            'a class in a braced namespace' => ['/redeclare-namespaced.php', 'namespaced'],
            'a function in a condition that checks something else' => ['/redeclare-conditional.php', 'conditional'],
        ];
    }

    /**
     * A script whose own file declares a function or class without an existence check cannot run twice in one process:
     * each run is answered, then its worker is replaced, so no request meets "Cannot redeclare".
     */
    #[DataProvider('unguardedDeclarations')]
    public function testAScriptThatDeclaresWithoutAGuardIsAnsweredEveryTimeOnAFreshWorker(string $path, string $answer): void
    {
        $pids = [];
        for ($i = 0; $i < 3; $i++) {
            $pid = $this->workerPid();
            $response = $this->get($path);
            self::assertSame(200, $response['status'], $this->server()->log());
            [$said, $servedBy] = explode(' ', $response['body']) + ['', ''];
            self::assertSame($answer, $said);
            self::assertSame((string) $pid, $servedBy);
            $this->waitForReplacement($pid);
            $pids[] = $servedBy;
        }
        self::assertCount(3, array_unique($pids), 'each run on a worker of its own');
        $log = $this->server()->log();
        self::assertStringNotContainsString('PHP Fatal error', $log);
        self::assertStringContainsString("will be replaced: $path declares a function or class without a function_exists() or class_exists() check", $log);
    }

    /**
     * An include file asked for by its URL after a page of the same worker loaded it would redeclare its functions:
     * it is not run there (503, Retry-After) and the worker is replaced cleanly, not by a fatal error, so the
     * next try runs it on a worker that has not loaded it.
     */
    public function testAnIncludeFileRequestedAfterAPageLoadedItIsNotRunAgainOnThatWorker(): void
    {
        $pid = $this->workerPid();
        self::assertSame("helped $pid", $this->get('/uses-helper.php')['body'], $this->server()->log());
        $refused = $this->get('/helper-include.php');
        self::assertSame(503, $refused['status'], $this->server()->log());
        self::assertSame(['1'], $refused['headers']['retry-after'] ?? null);
        $this->waitForReplacement($pid);
        $again = $this->get('/helper-include.php');
        self::assertSame(200, $again['status'], 'run on a worker that had not loaded it');
        self::assertSame('', $again['body']);
        $log = $this->server()->log();
        // No fatal error (the log's later line for the fresh worker quotes "Cannot redeclare" as the reason it goes).
        self::assertStringNotContainsString('PHP Fatal error', $log);
        self::assertStringNotContainsString('fatal error: Cannot redeclare', $log);
        self::assertStringContainsString('/helper-include.php: 503, not run: an earlier request in this worker loaded it', $log);
        self::assertStringContainsString("worker 1 (pid $pid) will be replaced: /helper-include.php was requested after an earlier request loaded it", $log);
    }

    public function testAGuardedDeclarationRunsAgainOnTheSameWorker(): void
    {
        $pid = $this->workerPid();
        for ($i = 0; $i < 3; $i++) {
            self::assertSame("guarded $pid", $this->get('/redeclare-guarded.php')['body'], $this->server()->log());
        }
        self::assertSame($pid, $this->workerPid());
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
        $this->server()->waitForLog('~PHP Fatal error:  Uncaught RuntimeException: nobody caught this~');
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
        // One entry of the error log (its lines folded with " | ").
        $entry = $this->server()->waitForLog('~PHP Fatal error:  Uncaught Error: Call to undefined function kiln_half_no_such_function~', 5.0);
        self::assertMatchesRegularExpression(
            '~\] PHP Fatal error:  Uncaught Error: Call to undefined function kiln_half_no_such_function\(\) in \S+/half/functions\.php:12'
            . ' \| Stack trace: \| #0 \S+/half/page\.php\(9\): kiln_half_fail\(\) \| #1 \{main\} \|   thrown in \S+/half/functions\.php on line 12$~',
            $entry,
        );
        $log = $this->server()->log();
        self::assertStringNotContainsString('SequentialRunner', $log, 'no frame of Kiln\'s own');
    }
}
