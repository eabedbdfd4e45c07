<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Isolated;

use Kiln\Tests\Support\HttpClient;

/**
 * A slow isolated request never holds up the coroutine routes of its worker: the worker waits for php-cgi
 * in the loop, like any other socket. Wide margins: serialised, the routes would finish after the script.
 */
final class TierOverlapTest extends IsolatedTestCase
{
    public function testAThreeSecondIsolatedRequestAndAHundredConcurrentRouteRequestsOverlapOnOneWorker(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        $this->waitForChildren(1);
        $requests = [['/legacy/sleep.php?ms=3000', 0.0]];
        for ($i = 0; $i < 100; $i++) {
            $requests[] = ['/wait', 0.2]; // each route waits 50 ms in the loop
        }
        $responses = $this->fire($requests, 20.0);

        $isolated = array_shift($responses);
        self::assertSame(200, $isolated['status'], $isolated['body']);
        self::assertStringStartsWith('slept', $isolated['body']);
        self::assertGreaterThanOrEqual(3.0, $isolated['time']);
        $last = 0.0;
        foreach ($responses as $i => $response) {
            self::assertSame([200, 'waited'], [$response['status'], $response['body']], "route request $i");
            $last = max($last, $response['time']);
        }
        self::assertLessThan(2.0, $last, 'every route request is answered while the script still runs');
        self::assertLessThan($isolated['time'] - 1.0, $last);
    }

    /**
     * Sends each [path, after seconds] on its own connection and reads every answer with one select loop.
     *
     * @param list<array{string, float}> $requests
     * @return list<array{status: int, body: string, time: float}> time: seconds from the start to the answer
     */
    private function fire(array $requests, float $timeout): array
    {
        $server = $this->server();
        $started = microtime(true);
        $deadline = $started + $timeout;
        $sockets = [];
        $pending = [];
        $raw = array_fill(0, \count($requests), '');
        $times = [];
        foreach ($requests as $i => [$path]) {
            $pending[$i] = "GET $path HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n";
        }
        while (\count($times) < \count($requests)) {
            self::assertLessThan($deadline, microtime(true), \count($requests) - \count($times) . " request(s) unanswered after $timeout s");
            foreach ($pending as $i => $bytes) {
                if (microtime(true) - $started < $requests[$i][1]) {
                    continue;
                }
                $socket = @stream_socket_client("tcp://{$server->host()}:{$server->port()}", $errno, $error, 5.0);
                self::assertNotFalse($socket, "connect $i: $error");
                self::assertSame(\strlen($bytes), fwrite($socket, $bytes));
                stream_set_blocking($socket, false);
                $sockets[$i] = $socket;
                unset($pending[$i]);
            }
            $read = $sockets;
            $write = $except = null;
            if ($read === [] || @stream_select($read, $write, $except, 0, 20_000) < 1) {
                usleep($read === [] ? 5_000 : 0);
                continue;
            }
            foreach ($read as $i => $socket) {
                $chunk = fread($socket, 65536);
                $raw[$i] .= (string) $chunk;
                if (($chunk === '' || $chunk === false) && feof($socket)) {
                    $times[$i] = microtime(true) - $started;
                    fclose($socket);
                    unset($sockets[$i]);
                }
            }
        }
        $responses = [];
        foreach (array_keys($requests) as $i) {
            $responses[] = ['time' => $times[$i]] + array_intersect_key(HttpClient::parse($raw[$i]), ['status' => 0, 'body' => '']);
        }
        return $responses;
    }
}
