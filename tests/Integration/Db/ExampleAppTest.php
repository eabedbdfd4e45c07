<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Db;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\MariaDbServer;
use Kiln\Tests\Support\PostgresServer;
use Kiln\Tests\Support\SseClient;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * examples/db/app.php on one Kiln worker against each database: 200 requests that each sleep one second in
 * the database finish together, and /hello answers while they sleep.
 */
final class ExampleAppTest extends TestCase
{
    /** @return iterable<string, array{string}> */
    public static function databases(): iterable
    {
        yield 'PostgreSQL' => ['postgres'];
        yield 'MariaDB' => ['mariadb'];
    }

    #[DataProvider('databases')]
    public function testTwoHundredSlowQueriesRunTogetherAndHelloAnswersMeanwhile(string $database): void
    {
        $server = $database === 'postgres' ? PostgresServer::start() : MariaDbServer::start();
        $kiln = KilnProcess::start(\dirname(__DIR__, 3) . '/examples/db/app.php', ['--workers=1'], ['DATABASE_URL' => $server->url('max=210&wait=30')]);
        try {
            $ten = HttpClient::get($kiln->baseUrl() . '/db/ten', [], 30);
            self::assertSame(200, $ten['status'], $ten['body']);
            $squares = json_decode($ten['body'], true);
            self::assertSame([1, 4, 9, 16, 25, 36, 49, 64, 81, 100], \is_array($squares) ? $squares['squares'] ?? null : null);
            foreach ([1, 2] as $hits) {
                $counter = HttpClient::parse($this->exchange($kiln, "POST /db/counter HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"));
                self::assertSame([200, ['hits' => $hits]], [$counter['status'], json_decode($counter['body'], true)], $counter['body']);
            }

            if ($database === 'postgres') {
                $this->assertNotifyReachesServerSentEvents($kiln);
            }
            $this->sleepers($kiln, 200, 60.0); // opens the pool's 200 connections
            $started = microtime(true);
            [$answers, $firstSleeperDone, $helloDone] = $this->sleepers($kiln, 200, 30.0, hello: true);
            $elapsed = microtime(true) - $started;
            fwrite(STDERR, \sprintf("%s: 200 requests sleeping 1 s in the database took %.2f s on one worker; /hello answered after %.3f s\n", $database, $elapsed, $helloDone - $started));
            self::assertCount(200, array_filter($answers, static fn(string $a): bool => str_starts_with($a, 'HTTP/1.1 200') && str_contains($a, '"slept":1')));
            self::assertLessThan(6.0, $elapsed, 'serially this would take 200 s');
            self::assertLessThan($firstSleeperDone, $helloDone, '/hello answered while every sleeper was still sleeping');
        } finally {
            $kiln->stop();
            $server->stop();
        }
    }

    private function assertNotifyReachesServerSentEvents(KilnProcess $kiln): void
    {
        $events = new SseClient('127.0.0.1', $kiln->port(), '/events/db');
        try {
            self::assertSame(200, $events->status);
            $delivered = false;
            // The relay starts with the worker; until it listens, a NOTIFY reaches nobody: send until one arrives.
            for ($attempt = 0; $attempt < 50 && !$delivered; $attempt++) {
                $body = "hello $attempt";
                $answer = HttpClient::parse($this->exchange($kiln, "POST /db/notify HTTP/1.1\r\nHost: test\r\nContent-Length: " . \strlen($body) . "\r\nConnection: close\r\n\r\n$body"));
                self::assertSame(200, $answer['status'], $answer['body']);
                $delivered = $events->waitFor(static fn(SseParser $p): bool => $p->events() !== [], 0.2);
            }
            self::assertTrue($delivered, 'a NOTIFY reached the SSE client');
            self::assertMatchesRegularExpression('/^hello \d+$/', $events->parser->events()[0]['data']);
        } finally {
            $events->close();
        }
    }

    private function exchange(KilnProcess $kiln, string $request): string
    {
        $socket = stream_socket_client("tcp://127.0.0.1:{$kiln->port()}", $code, $message, 5.0);
        self::assertNotFalse($socket, "connect: $message");
        stream_set_timeout($socket, 10);
        fwrite($socket, $request);
        $response = (string) stream_get_contents($socket);
        fclose($socket);

        return $response;
    }

    /**
     * Sends $count requests to /db/sleep?s=1 at once and reads every answer; with $hello, asks /hello once
     * they are all sent.
     *
     * @return array{list<string>, float, float} the answers, when the first came, when /hello answered
     */
    private function sleepers(KilnProcess $kiln, int $count, float $timeout, bool $hello = false): array
    {
        $sockets = [];
        for ($i = 0; $i < $count; $i++) {
            $socket = stream_socket_client("tcp://127.0.0.1:{$kiln->port()}", $code, $message, 5.0);
            self::assertNotFalse($socket, "connect: $message");
            fwrite($socket, "GET /db/sleep?s=1 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
            stream_set_blocking($socket, false);
            $sockets[$i] = $socket;
        }
        $helloDone = 0.0;
        if ($hello) {
            $answer = HttpClient::get($kiln->baseUrl() . '/hello', [], 5);
            self::assertSame([200, 'Hello, World!'], [$answer['status'], $answer['body']]);
            $helloDone = microtime(true);
        }
        $answers = array_fill(0, $count, '');
        $firstDone = INF;
        $deadline = microtime(true) + $timeout;
        while ($sockets !== [] && microtime(true) < $deadline) {
            $read = array_values($sockets);
            $write = $except = null;
            if (@stream_select($read, $write, $except, 0, 200_000) === false) {
                break;
            }
            foreach ($read as $socket) {
                $i = (int) array_search($socket, $sockets, true);
                $chunk = (string) fread($socket, 65536);
                $answers[$i] .= $chunk;
                if ($chunk === '' && feof($socket)) {
                    $firstDone = min($firstDone, microtime(true));
                    fclose($socket);
                    unset($sockets[$i]);
                }
            }
        }
        self::assertSame([], $sockets, 'every request was answered in time');

        return [array_values($answers), $firstDone, $helloDone];
    }
}
