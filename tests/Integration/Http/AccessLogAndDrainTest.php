<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/** Each test runs its own server: one reads the access log, the other stops it gracefully. */
final class AccessLogAndDrainTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/http/app.php';

    public function testTheAccessLogRecordsTheStatusActuallySent(): void
    {
        $log = (string) tempnam(sys_get_temp_dir(), 'kiln-access-');
        $server = KilnProcess::start(self::APP, ['--workers=1', "--access-log=$log"]);
        try {
            foreach (['/bad-header', '/status?code=100', '/hello'] as $path) {
                $client = RawClient::to($server);
                $client->send("GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                self::assertNotNull($client->readResponse());
                $client->close();
            }
            $deadline = microtime(true) + 5.0;
            while (substr_count((string) file_get_contents($log), "\n") < 3 && microtime(true) < $deadline) {
                usleep(50000);
            }
            $lines = file($log, FILE_IGNORE_NEW_LINES) ?: [];
            self::assertCount(3, $lines);
            self::assertStringContainsString('"GET /bad-header HTTP/1.1" 500 ', $lines[0]);
            self::assertStringContainsString('"GET /status?code=100 HTTP/1.1" 500 ', $lines[1]);
            self::assertStringContainsString('"GET /hello HTTP/1.1" 200 13 ', $lines[2]);
        } finally {
            $server->stop();
            @unlink($log);
        }
    }

    /**
     * A JSON line is written as its response ends, as a combined one is. (Left to the worker's once-a-second
     * housekeeping, each line came up to a second late: three lines in a row within 0.2 s each tell the two apart.)
     */
    public function testAJsonAccessLogLineIsWrittenAsItsResponseEnds(): void
    {
        $log = (string) tempnam(sys_get_temp_dir(), 'kiln-access-');
        $server = KilnProcess::start(self::APP, ['--workers=1', "--access-log=$log", '--access-log-format=json']);
        try {
            $client = RawClient::to($server);
            for ($i = 1; $i <= 3; $i++) {
                $client->send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
                self::assertNotNull($client->readResponse());
                $deadline = microtime(true) + 0.2;
                while (substr_count((string) file_get_contents($log), "\n") < $i && microtime(true) < $deadline) {
                    usleep(5000);
                }
                self::assertSame($i, substr_count((string) file_get_contents($log), "\n"), "line $i written as its response ended");
            }
            $client->close();
            $entry = json_decode((string) (file($log, FILE_IGNORE_NEW_LINES) ?: [''])[0], true, flags: JSON_THROW_ON_ERROR);
            self::assertIsArray($entry);
            self::assertSame(['GET', '/hello', 200], [$entry['method'], $entry['path'], $entry['status']]);
        } finally {
            $server->stop();
            @unlink($log);
        }
    }

    /** A request refused once its head was read is logged with its request line, Referer and User-Agent; one refused in its head with "-". */
    public function testARequestRefusedAfterItsHeadWasReadIsLoggedWithItsRequestLine(): void
    {
        $log = (string) tempnam(sys_get_temp_dir(), 'kiln-access-');
        $server = KilnProcess::start(self::APP, ['--workers=1', "--access-log=$log", '--limit-body-size=1000', '--limit-body-timeout=0.3']);
        $fields = "Host: x\r\nReferer: http://example.test/form\r\nUser-Agent: probe/1.0\r\n";
        try {
            $requests = [
                "POST /echo HTTP/1.1\r\n{$fields}Content-Length: 2000\r\n\r\n" . str_repeat('a', 2000),
                "POST /echo?chunked HTTP/1.1\r\n{$fields}Transfer-Encoding: chunked\r\n\r\n7d0\r\n" . str_repeat('a', 2000) . "\r\n0\r\n\r\n",
                "POST /echo?slow HTTP/1.1\r\n{$fields}Content-Length: 10\r\n\r\nabc",
                "GET /bad target HTTP/1.1\r\n{$fields}\r\n",
            ];
            foreach ($requests as $request) {
                $client = RawClient::to($server);
                $client->send($request);
                self::assertNotNull($client->readResponse(5.0));
                $client->close();
            }
            $deadline = microtime(true) + 5.0;
            while (substr_count((string) file_get_contents($log), "\n") < 4 && microtime(true) < $deadline) {
                usleep(50000);
            }
            $lines = file($log, FILE_IGNORE_NEW_LINES) ?: [];
            self::assertCount(4, $lines);
            $named = '"http://example.test/form" "probe/1.0"';
            self::assertMatchesRegularExpression('~"POST /echo HTTP/1\.1" 413 \d+ ' . preg_quote($named, '~') . '$~', $lines[0]);
            self::assertMatchesRegularExpression('~"POST /echo\?chunked HTTP/1\.1" 413 \d+ ' . preg_quote($named, '~') . '$~', $lines[1]);
            self::assertMatchesRegularExpression('~"POST /echo\?slow HTTP/1\.1" 408 \d+ ' . preg_quote($named, '~') . '$~', $lines[2]);
            self::assertMatchesRegularExpression('~"-" 400 \d+ "-" "-"$~', $lines[3], 'a head that could not be read names nothing');
        } finally {
            $server->stop();
            @unlink($log);
        }
    }

    public function testARequestArrivingJustAfterADrainBeginsOnAnOlderFreshConnectionIsAnswered(): void
    {
        // A short header timeout makes the housekeeping tick 50 ms, so an early close would not be missed.
        $server = KilnProcess::start(self::APP, ['--workers=1', '--limit-keep-alive-timeout=30', '--limit-header-timeout=0.2']);
        try {
            $client = RawClient::to($server);
            usleep(1_500_000); // connected, silent for longer than the drain's 1 s idle grace
            $server->signal(SIGQUIT);
            usleep(600_000); // within the grace, which counts from the drain, not from the connect
            $client->send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
            $response = $client->readResponse(5.0);
            self::assertNotNull($response, 'the connection was closed with the request on the wire');
            self::assertSame('Hello, World!', $response['body']);
            self::assertSame('close', $response['headers']['connection'][0] ?? null);
            self::assertSame(0, $server->waitForExit(10.0), $server->log());
        } finally {
            $server->stop();
        }
    }
}
