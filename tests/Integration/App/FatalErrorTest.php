<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\App;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * A fatal error in one handler ends its worker; the other requests that worker had in flight get a 500
 * (not a hang, not a bare close), the worker is replaced, and the server keeps serving.
 */
final class FatalErrorTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/fatal/app.php';

    private ?KilnProcess $server = null;

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
    }

    public function testAFatalErrorAnswersEveryRequestInFlightWith500AndTheWorkerIsReplaced(): void
    {
        $log = $this->assertWorkerDiesCleanly('/fatal');
        self::assertMatchesRegularExpression('~fatal error: Cannot redeclare .*answered 4 in-flight request\(s\) with 500~', $log);
    }

    public function testMemoryExhaustionAnswersEveryRequestInFlightWith500AndTheWorkerIsReplaced(): void
    {
        $log = $this->assertWorkerDiesCleanly('/oom');
        self::assertMatchesRegularExpression('~fatal error: Allowed memory size .*answered 4 in-flight request\(s\) with 500~', $log);
    }

    public function testARequestThatWouldTakeMoreThanMemoryLimitIsEndedAndTheServerServesOn(): void
    {
        $log = $this->assertWorkerDiesCleanly('/grow', ['--memory-limit=64M', '--max-memory=32M']);
        self::assertMatchesRegularExpression('~fatal error: Allowed memory size of 67108864 bytes exhausted.*answered 4 in-flight request\(s\) with 500~s', $log);
    }

    public function testWorkersGetAMemoryLimitThoughPhpsCliHasNone(): void
    {
        self::assertSame('1G', $this->limitServed([]), '4 x the default --max-memory of 256M');
        self::assertSame('400M', $this->limitServed(['--max-memory=100M']), '4 x --max-memory');
        self::assertSame('-1', $this->limitServed([], ['KILN_MEMORY_LIMIT' => '-1']), 'none, when asked');
        $this->server = KilnProcess::launch([PHP_BINARY, '-d', 'memory_limit=300M', __DIR__ . '/../../../bin/kiln', 'serve', self::APP, '--listen=127.0.0.1:0', '--workers=1']);
        self::assertSame('300M', $this->get($this->server, '/memory-limit')['body'], "the limit configured for PHP, when there is one");
    }

    public function testExitInAHandlerAnswersEveryRequestInFlightWith500(): void
    {
        $log = $this->assertWorkerDiesCleanly('/exit');
        self::assertMatchesRegularExpression('~worker exited; answered 4 in-flight request\(s\) with 500~', $log);
    }

    public function testAnUndefinedFunctionIsAnOrdinary500AndTheWorkerLivesOn(): void
    {
        $server = $this->server = KilnProcess::start(self::APP, ['--workers=1']);
        $pid = $this->get($server, '/pid')['body'];
        self::assertSame(500, $this->get($server, '/undefined')['status']);
        self::assertSame($pid, $this->get($server, '/pid')['body']);
    }

    /**
     * @param list<string> $args
     * @param array<string, string> $env
     */
    private function limitServed(array $args, array $env = []): string
    {
        $server = KilnProcess::start(self::APP, ['--workers=1', ...$args], $env);
        try {
            return $this->get($server, '/memory-limit')['body'];
        } finally {
            $server->stop();
        }
    }

    /**
     * @param list<string> $args
     * @return string the server log
     */
    private function assertWorkerDiesCleanly(string $route, array $args = []): string
    {
        $server = $this->server = KilnProcess::start(self::APP, ['--workers=1', ...$args]);
        $workers = $server->workerPids();
        self::assertCount(1, $workers);
        $sleepers = [];
        for ($i = 0; $i < 3; $i++) {
            $sleepers[$i] = RawClient::to($server);
            $sleepers[$i]->send("GET /sleep HTTP/1.1\r\nHost: test\r\n\r\n");
        }
        // A round trip after them: the worker has read the sleepers' requests once it answers this one.
        self::assertSame(200, $this->get($server, '/hello')['status']);

        $fatal = RawClient::to($server);
        $fatal->send("GET $route HTTP/1.1\r\nHost: test\r\n\r\n");
        foreach ([$fatal, ...$sleepers] as $i => $client) {
            $response = $client->readResponse(5.0);
            self::assertNotNull($response, "client $i saw the connection closed without a response");
            self::assertSame(500, $response['status'], "client $i");
            self::assertSame(['close'], $response['headers']['connection'] ?? null, "client $i");
            self::assertTrue($client->isClosedWithin(2.0), "client $i: the connection must close after the 500");
        }

        $replaced = $this->waitForReplacement($server, $workers[0]);
        self::assertSame(200, ($hello = $this->get($server, '/hello'))['status']);
        self::assertSame('Hello, World!', $hello['body']);
        self::assertSame((string) $replaced, $this->get($server, '/pid')['body']);
        return $server->log();
    }

    private function waitForReplacement(KilnProcess $server, int $dead): int
    {
        $deadline = microtime(true) + 10.0;
        while (microtime(true) < $deadline) {
            $pids = $server->workerPids();
            if (\count($pids) === 1 && $pids[0] !== $dead) {
                return $pids[0];
            }
            usleep(20_000);
        }
        self::fail("worker $dead was not replaced within 10 s; log:\n" . $server->log());
    }

    /** @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string} */
    private function get(KilnProcess $server, string $path): array
    {
        $client = RawClient::to($server);
        $client->send("GET $path HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        $response = $client->readResponse(5.0);
        $client->close();
        self::assertNotNull($response, "GET $path: no response");
        return $response;
    }
}
