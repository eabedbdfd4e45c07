<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\IsolatedPool;

use Kiln\Tests\Integration\Isolated\IsolatedTestCase;
use Kiln\Tests\Support\RawClient;

/**
 * Each worker keeps its share of the children's connections (docs/design/027): requests that may be sent again
 * reuse them, the others get a connection of their own, a child leaving by its request limit loses nothing,
 * and a draining worker lets its children go at once.
 */
final class KeptConnectionsTest extends IsolatedTestCase
{
    public function testGetsReuseTheWorkersKeptConnectionAndEachPostGetsAConnectionOfItsOwn(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        $this->waitForChildren(1);
        $gets = [];
        for ($i = 1; $i <= 10; $i++) {
            $gets[] = $this->connectionOf($this->get('/legacy/conn.php'), 0, "GET $i");
        }
        self::assertCount(1, array_unique($gets), 'ten GETs, one connection: ' . implode(' ', $gets));
        $posts = [];
        for ($i = 1; $i <= 5; $i++) {
            $client = RawClient::to($this->server());
            $client->send("POST /legacy/conn.php HTTP/1.1\r\nHost: test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\nConnection: close\r\n\r\nn=$i&x=y");
            $posts[] = $this->connectionOf($client->readResponse(10.0), 7, "POST $i");
            $client->close();
        }
        self::assertCount(5, array_unique($posts), 'five POSTs, five connections: ' . implode(' ', $posts));
        self::assertNotContains($gets[0], $posts, 'no POST went on the kept connection');
        self::assertSame(200, $this->get('/legacy/conn.php')['status'], 'GETs are served again after the POSTs');
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

    public function testADrainingWorkerClosesItsKeptConnectionsAtOnceSoItsReplacementFindsTheChildrenFree(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '1'], ['--max-requests=3']);
        $this->waitForChildren(1);
        [$parent] = $this->phpCgiParents();
        $socket = self::socketOf($parent);
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);
        self::assertSame(1, self::acceptedConnections($socket), 'the child holds the worker\'s kept connection');
        [$old] = $this->workers();
        $linger = RawClient::to($server);
        $linger->send("GET /linger?s=5 HTTP/1.1\r\nHost: test\r\n\r\n");
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);
        self::assertSame(200, $this->get('/hello')['status']); // the third: the worker is recycled and drains
        self::waitUntil(fn(): bool => \count($this->workers()) === 2, 5.0, 'the replacement worker beside the draining one');
        self::waitUntil(static fn(): bool => self::acceptedConnections($socket) === 0, 1.0, 'the draining worker to let the child go (it still serves /linger)');
        self::assertTrue(self::isAlive($old), 'the old worker still drains');
        $started = microtime(true);
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);
        self::assertLessThan(1.5, microtime(true) - $started, 'the replacement did not wait for the child');
        self::assertSame(200, $linger->readResponse(10.0)['status'] ?? 0);
        $linger->close();
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
