<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * --stall-timeout and a loop turn that runs many short handlers one after another (requests read in one turn
 * run at its end, in one Fiber): each finished request is a heartbeat, so a worker that keeps answering is
 * neither reported nor killed, however long the whole turn takes.
 */
final class BusyWorkerIsNotStalledTest extends TestCase
{
    private const REQUESTS = 5;

    public function testConcurrentSequentialScriptsEachHoldingTheLoopForMostOfTheTimeoutAreAllAnsweredByAWorkerNotReported(): void
    {
        $kiln = KilnProcess::start(__DIR__ . '/../../Fixtures/server/stalls-site', ['--workers=1', '--tier=sequential', '--front-controller=none', '--time-limit=1', '--stall-timeout=2']);
        $this->assertAllAnsweredBySameWorker($kiln, '/busy.php?ms=1200');
    }

    public function testConcurrentAppHandlersEachSpinningForMostOfTheTimeoutAreAllAnsweredByAWorkerNotReported(): void
    {
        $kiln = KilnProcess::start(__DIR__ . '/../../Fixtures/server/stalls.php', ['--workers=1', '--stall-timeout=1']);
        $this->assertAllAnsweredBySameWorker($kiln, '/busy?ms=600');
    }

    public function testASequentialSiteWhoseScriptsMayOutlastTheStallTimeoutIsWarnedAboutAtStartUpAndServes(): void
    {
        $kiln = KilnProcess::start(__DIR__ . '/../../Fixtures/server/stalls-site', ['--workers=1', '--tier=sequential', '--front-controller=none', '--time-limit=0', '--stall-timeout=2']);
        $kiln->waitForLog('~\[warning\] \[supervisor \d+\] --time-limit=0 \(none\) with --stall-timeout=2: the sequential tier runs scripts on the worker\'s event loop~');
        self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/busy.php?ms=0')['status']);
        self::assertSame(0, $kiln->stop());
    }

    private function assertAllAnsweredBySameWorker(KilnProcess $kiln, string $target): void
    {
        $pid = (int) HttpClient::get($kiln->baseUrl() . '/busy' . (str_contains($target, '.php') ? '.php' : '') . '?ms=0')['body'];
        self::assertGreaterThan(0, $pid);
        $sockets = [];
        for ($i = 0; $i < self::REQUESTS; $i++) { // connected first, so the worker reads the requests together
            $socket = stream_socket_client("tcp://{$kiln->host()}:{$kiln->port()}", $errno, $error, 5);
            self::assertNotFalse($socket, (string) $error);
            $sockets[] = $socket;
        }
        foreach ($sockets as $socket) {
            fwrite($socket, "GET $target HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        }
        foreach ($sockets as $i => $socket) {
            $answer = $this->readUntilClosed($socket);
            self::assertStringStartsWith('HTTP/1.1 200', $answer, "request $i");
            self::assertStringEndsWith("\r\n\r\n$pid", $answer, "request $i, answered by the worker that was there before");
        }
        self::assertSame($pid, (int) HttpClient::get($kiln->baseUrl() . '/busy' . (str_contains($target, '.php') ? '.php' : '') . '?ms=0')['body']);
        self::assertDoesNotMatchRegularExpression('~stood still|stalled|killing it~', $kiln->log());
        self::assertSame(0, $kiln->stop());
    }

    /** @param resource $socket */
    private function readUntilClosed(mixed $socket): string
    {
        stream_set_timeout($socket, 30);
        $data = '';
        $deadline = microtime(true) + 30;
        while (!feof($socket) && microtime(true) < $deadline) {
            $data .= (string) fread($socket, 65536);
        }
        self::assertTrue(feof($socket), 'the connection closed in time');
        fclose($socket);
        return $data;
    }
}
