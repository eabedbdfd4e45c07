<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http;

use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * 1,100 connections held at once by one worker: the epoll driver serves them all; the select driver
 * (which breaks past descriptor 1024) caps itself, answers the excess with 503 and keeps serving.
 * The client side uses blocking sockets only: stream_select() would break on its own descriptors too.
 */
final class ManyConnectionsTest extends TestCase
{
    private const CONNECTIONS = 1100;

    protected function setUp(): void
    {
        if (!\extension_loaded('ffi') && $this->name() === 'testEpollWorkerServesElevenHundredConcurrentConnections') {
            self::fail('the epoll driver needs ext-ffi: scripts/install-deps.sh installs it');
        }
        [$soft, $hard] = [posix_getrlimit()['soft openfiles'] ?? 0, posix_getrlimit()['hard openfiles'] ?? 0];
        if ((int) $soft < 3 * self::CONNECTIONS) {
            posix_setrlimit(POSIX_RLIMIT_NOFILE, min(8192, (int) $hard), (int) $hard);
        }
    }

    public function testEpollWorkerServesElevenHundredConcurrentConnections(): void
    {
        $server = KilnProcess::start(\dirname(__DIR__, 2) . '/Fixtures/http/app.php', ['--workers=1', '--connections=2000']);
        try {
            self::assertStringContainsString('epoll', $server->log());
            [$ok, $shed] = $this->holdAndAsk($server);
            self::assertSame(self::CONNECTIONS, $ok, 'every connection is served');
            self::assertSame(0, $shed);
        } finally {
            $server->stop();
        }
    }

    public function testSelectWorkerShedsTheExcessCleanlyAndServesTheRest(): void
    {
        $server = KilnProcess::start(
            \dirname(__DIR__, 2) . '/Fixtures/http/app.php',
            ['--workers=1', '--driver=select', '--connections=2000'],
        );
        try {
            $server->waitForLog('/capacity|cap/i', 5.0);
            [$ok, $shed] = $this->holdAndAsk($server);
            self::assertSame(self::CONNECTIONS, $ok + $shed, 'every connection got an answer: a 200 or a 503');
            self::assertGreaterThan(0, $shed);
            self::assertGreaterThanOrEqual(900, $ok);
            $server->waitForLog('/shed \d+ connection/', 15.0);
            // Served again once the held connections are gone (the worker may not have seen every close yet:
            // until then a new connection is over the cap and gets a 503 with Retry-After, as it should).
            $deadline = microtime(true) + 5.0;
            do {
                $check = stream_socket_client('tcp://127.0.0.1:' . $server->port(), $errno, $error, 5.0);
                self::assertNotFalse($check);
                fwrite($check, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                stream_set_timeout($check, 5);
                $answer = (string) stream_get_contents($check);
                fclose($check);
                $shedAgain = str_starts_with($answer, 'HTTP/1.1 503 ') && str_contains($answer, "Retry-After: 1\r\n");
            } while ($shedAgain && microtime(true) < $deadline && usleep(50_000) === null);
            self::assertStringContainsString('Hello, World!', $answer);
        } finally {
            $server->stop();
        }
    }

    /** @return array{int, int} 200s and 503s */
    private function holdAndAsk(KilnProcess $server): array
    {
        $sockets = [];
        for ($i = 0; $i < self::CONNECTIONS; $i++) {
            $socket = @stream_socket_client('tcp://127.0.0.1:' . $server->port(), $errno, $error, 10.0);
            self::assertNotFalse($socket, "connection $i: $error");
            stream_set_timeout($socket, 10);
            $sockets[] = $socket;
        }
        foreach ($sockets as $socket) {
            @fwrite($socket, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
        }
        $ok = 0;
        $shed = 0;
        foreach ($sockets as $socket) {
            $line = (string) fgets($socket);
            if (str_starts_with($line, 'HTTP/1.1 200')) {
                $ok++;
            } elseif (str_starts_with($line, 'HTTP/1.1 503')) {
                $shed++;
            }
        }
        foreach ($sockets as $socket) {
            fclose($socket);
        }
        return [$ok, $shed];
    }
}
