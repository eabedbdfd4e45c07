<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/** Starts one Kiln server on the HTTP fixture app per test class (free port, readiness by log line). */
abstract class ServerTestCase extends TestCase
{
    protected static ?KilnProcess $server = null;

    /** @return list<string> extra `kiln serve` options for this class */
    protected static function serverArgs(): array
    {
        return ['--workers=1'];
    }

    public static function setUpBeforeClass(): void
    {
        static::$server = KilnProcess::start(\dirname(__DIR__, 2) . '/Fixtures/http/app.php', static::serverArgs());
    }

    public static function tearDownAfterClass(): void
    {
        static::$server?->stop();
        static::$server = null;
    }

    protected function server(): KilnProcess
    {
        $server = static::$server;
        self::assertNotNull($server);
        return $server;
    }

    protected function client(): RawClient
    {
        return RawClient::to($this->server());
    }

    protected static function get(string $path, string $extra = ''): string
    {
        return "GET $path HTTP/1.1\r\nHost: localhost\r\n$extra\r\n";
    }

    /**
     * @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string}
     */
    protected function exchange(string $request, float $timeout = 5.0): array
    {
        $client = $this->client();
        $client->send($request);
        $response = $client->readResponse($timeout);
        $client->close();
        self::assertNotNull($response, 'the server closed without a response');
        return $response;
    }
}
