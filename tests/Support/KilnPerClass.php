<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * For a test class that runs its cases against one Kiln started in its setUpBeforeClass() (into self::$server):
 * stopped after the class, and the ways its cases talk to it: get() through HttpClient, open() a raw GET left
 * unread, readUntil() a needle shows up on such a socket (asserting on timeout and on close).
 */
trait KilnPerClass
{
    private static ?KilnProcess $server = null;

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    private function server(): KilnProcess
    {
        self::assertNotNull(self::$server);

        return self::$server;
    }

    /**
     * @param array<string, string> $headers
     *
     * @return array{status: int, headers: array<string, string>, body: string}
     */
    private function get(string $target, array $headers = [], float $timeout = 5.0): array
    {
        return HttpClient::get($this->server()->baseUrl() . $target, $headers, $timeout);
    }

    /** @return resource */
    private function open(string $target): mixed
    {
        $server = $this->server();
        $socket = \stream_socket_client("tcp://{$server->host()}:{$server->port()}", $errno, $error, 5.0);
        self::assertIsResource($socket, (string) $error);
        \fwrite($socket, "GET $target HTTP/1.1\r\nHost: x\r\n\r\n");

        return $socket;
    }

    /** @param resource $socket */
    private function readUntil(mixed $socket, string $needle, float $timeout): string
    {
        $data = '';
        $deadline = \microtime(true) + $timeout;
        \stream_set_blocking($socket, false);
        while (!\str_contains($data, $needle)) {
            $left = $deadline - \microtime(true);
            self::assertGreaterThan(0, $left, "timed out waiting for '$needle'; got: $data");
            $r = [$socket];
            $w = $e = null;
            if (@\stream_select($r, $w, $e, 0, (int) (\min($left, 0.1) * 1e6)) > 0) {
                $chunk = \fread($socket, 65536);
                self::assertFalse($chunk === '' && \feof($socket), "closed before '$needle'; got: $data");
                $data .= (string) $chunk;
            }
        }

        return $data;
    }
}
