<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\IsolatedPool;

use Kiln\Tests\Integration\Isolated\IsolatedTestCase;
use Kiln\Tests\Support\RawClient;

/**
 * A connection to the php-cgi children carries a worker's waiting requests back to back (docs/design/027):
 * requests that may be sent again reuse it, the others get a connection of their own, a child leaving by its
 * request limit loses nothing, and a worker with nothing waiting keeps no connection (no child is held idle).
 */
final class KeptConnectionsTest extends IsolatedTestCase
{
    public function testWaitingGetsReuseTheConnectionWhileEachPostAndEachLoneGetGetsOneOfItsOwn(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        $this->waitForChildren(1);
        $lone = [];
        for ($i = 1; $i <= 3; $i++) {
            $lone[] = $this->connectionOf($this->get('/legacy/conn.php'), 0, "lone GET $i");
        }
        self::assertCount(3, array_unique($lone), 'a GET with nothing waiting behind it: its connection is closed after it');
        $gets = $this->atOnce(array_fill(0, 10, "GET /legacy/conn.php HTTP/1.1\r\nHost: test\r\n\r\n"), 0);
        self::assertLessThan(10, \count(array_unique($gets)), 'ten GETs waiting for one child reuse connections: ' . implode(' ', $gets));
        $posts = $this->atOnce(array_fill(0, 5, "POST /legacy/conn.php HTTP/1.1\r\nHost: test\r\nContent-Length: 7\r\n\r\nn=1&x=y"), 7);
        self::assertCount(5, array_unique($posts), 'five POSTs waiting for one child, five connections: ' . implode(' ', $posts));
        self::assertSame([], array_intersect($posts, $gets), 'no POST went on a connection a GET used');
    }

    public function testWithChildrenLeavingEveryThreeRequestsNoGetOrPostIsLost(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '2', 'KILN_TEST_POOL_MAX_REQUESTS' => '3'], ['--workers=2']);
        $this->waitForChildren(2);
        $clients = [];
        for ($k = 0; $k < 6; $k++) {
            $clients[] = RawClient::to($this->server());
        }
        $pids = [];
        for ($round = 1; $round <= 15; $round++) {
            foreach ($clients as $k => $client) {
                $client->send(($k + $round) % 2 === 0
                    ? "GET /legacy/conn.php HTTP/1.1\r\nHost: test\r\n\r\n"
                    : "POST /legacy/conn.php HTTP/1.1\r\nHost: test\r\nContent-Length: " . (100 * ($k + 1)) . "\r\n\r\n" . str_repeat('p', 100 * ($k + 1)));
            }
            foreach ($clients as $k => $client) {
                $response = $client->readResponse(10.0);
                $what = "round $round, client $k";
                self::assertNotNull($response, "$what: no answer");
                self::assertSame(200, $response['status'], "$what: {$response['body']}");
                $body = json_decode($response['body'], true, 4, JSON_THROW_ON_ERROR);
                self::assertSame(($k + $round) % 2 === 0 ? 0 : 100 * ($k + 1), $body['input'], "$what: the whole body reached the script");
                $pids[$body['pid']] = true;
            }
        }
        foreach ($clients as $client) {
            $client->close();
        }
        self::assertGreaterThan(10, \count($pids), '90 requests, children leaving every 3: many children took turns');
    }

    public function testAWorkerWithNothingWaitingLeavesNoConnectionOpenSoTheChildIsFreeForAnyWorker(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        $this->waitForChildren(1);
        [$parent] = $this->phpCgiParents();
        $socket = self::socketOf($parent);
        for ($i = 1; $i <= 3; $i++) {
            self::assertSame(200, $this->get('/legacy/pid.php')['status']);
            self::waitUntil(static fn(): bool => self::acceptedConnections($socket) === 0, 0.5, "the connection of request $i to be closed (the child holds none)");
        }
    }

    /**
     * Sends each request on a connection of its own, all before reading any answer, and returns the connection
     * each was served on.
     *
     * @param list<string> $requests
     * @return list<string>
     */
    private function atOnce(array $requests, int $input): array
    {
        $clients = [];
        foreach ($requests as $request) {
            $client = RawClient::to($this->server());
            $client->send($request);
            $clients[] = $client;
        }
        $connections = [];
        foreach ($clients as $k => $client) {
            $connections[] = $this->connectionOf($client->readResponse(10.0), $input, "request $k");
            $client->close();
        }
        return $connections;
    }

    /**
     * The inode of the FastCGI connection a conn.php answer was served on (its sockets but the parent's
     * listening one), after checking the answer.
     *
     * @param array{status: int, body: string}|null $response
     */
    private function connectionOf(?array $response, int $input, string $what): string
    {
        self::assertNotNull($response, "$what: no answer");
        self::assertSame(200, $response['status'], "$what: {$response['body']}");
        $body = json_decode($response['body'], true, 4, JSON_THROW_ON_ERROR);
        self::assertSame($input, $body['input'], $what);
        [$parent] = $this->phpCgiParents();
        $listening = self::inodes($parent);
        return implode(',', array_diff($body['sockets'], $listening)) . "@{$body['pid']}";
    }

    /** @return list<int> the socket inodes a process holds */
    private static function inodes(int $pid): array
    {
        $inodes = [];
        foreach (glob("/proc/$pid/fd/*") ?: [] as $fd) {
            if (preg_match('/^socket:\[(\d+)\]$/', (string) @readlink($fd), $m) === 1) {
                $inodes[] = (int) $m[1];
            }
        }
        return $inodes;
    }

    /** The unix socket the php-cgi parent listens on (`-b PATH`). */
    private static function socketOf(int $parent): string
    {
        $command = self::commandLine($parent);
        $at = array_search('-b', $command, true);
        self::assertIsInt($at);
        return $command[$at + 1];
    }

    /** Connections the children have accepted on $socket and still hold (/proc/net/unix: connected, with its path). */
    private static function acceptedConnections(string $socket): int
    {
        $count = 0;
        foreach (file('/proc/net/unix', FILE_IGNORE_NEW_LINES) ?: [] as $line) {
            $fields = preg_split('/\s+/', trim($line)) ?: [];
            if (($fields[7] ?? '') === $socket && ($fields[5] ?? '') === '03') {
                $count++;
            }
        }
        return $count;
    }
}
