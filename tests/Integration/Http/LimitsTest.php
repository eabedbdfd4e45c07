<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http;

use Kiln\Tests\Support\RawClient;

/** Every limit and timeout, on a server started with small values so the tests stay quick. */
final class LimitsTest extends ServerTestCase
{
    protected static function serverArgs(): array
    {
        return [
            '--workers=1',
            '--connections=20',
            '--limit-request-line=1024',
            '--limit-header-line=1024',
            '--limit-header-bytes=4096',
            '--limit-header-count=20',
            '--limit-body-size=100000',
            '--limit-header-timeout=1',
            '--limit-body-timeout=1',
            '--limit-keep-alive-timeout=1',
            '--limit-write-timeout=1',
            '--limit-concurrency=5',
        ];
    }

    /** @return iterable<string, array{string, int}> */
    public static function oversized(): iterable
    {
        yield 'request line' => ['GET /' . str_repeat('a', 1100) . " HTTP/1.1\r\nHost: x\r\n\r\n", 414];
        yield 'header line' => ["GET / HTTP/1.1\r\nHost: x\r\nX-Big: " . str_repeat('b', 1100) . "\r\n\r\n", 431];
        yield 'header count' => ["GET / HTTP/1.1\r\nHost: x\r\n" . str_repeat("X-A: 1\r\n", 25) . "\r\n", 431];
        yield 'header bytes' => ["GET / HTTP/1.1\r\nHost: x\r\n" . str_repeat('X-Pad: ' . str_repeat('p', 900) . "\r\n", 5) . "\r\n", 431];
        yield 'declared body' => ["POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100001\r\n\r\n", 413];
        yield 'chunked body' => ["POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            . "10000\r\n" . str_repeat('c', 65536) . "\r\n10000\r\n" . str_repeat('c', 65536) . "\r\n0\r\n\r\n", 413];
    }

    /** @dataProvider oversized */
    public function testOverALimitGetsItsStatusThenClose(string $request, int $status): void
    {
        $client = $this->client();
        $client->trySend($request . self::get('/hello'));
        $response = $client->readResponse();
        self::assertNotNull($response);
        self::assertSame($status, $response['status']);
        self::assertSame('close', $response['headers']['connection'][0] ?? null);
        self::assertTrue($client->isClosedWithin(3.0));
        $this->assertStillServing();
    }

    public function testAClientStillUploadingPastTheBodyLimitCanSendItAllAndReadThe413(): void
    {
        $client = $this->client();
        $socket = $client->socket();
        $size = 16 * 1024 * 1024; // far more than the socket buffers hold: the server must keep reading
        $client->send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: $size\r\n\r\n");
        stream_set_blocking($socket, false);
        $block = str_repeat('u', 65536);
        $sent = 0;
        $deadline = microtime(true) + 4.0; // inside --limit-linger-timeout (5 s)
        while ($sent < $size && microtime(true) < $deadline) {
            $written = @fwrite($socket, $sent + \strlen($block) <= $size ? $block : substr($block, 0, $size - $sent));
            self::assertNotFalse($written, "the server reset the connection after $sent bytes of the body");
            $sent += $written;
            if ($written === 0) {
                $read = [];
                $write = [$socket];
                $except = null;
                stream_select($read, $write, $except, 0, 20_000);
            }
        }
        self::assertSame($size, $sent, 'the whole body could be sent while the server discarded it');
        stream_set_blocking($socket, true);
        $response = $client->readResponse();
        self::assertNotNull($response);
        self::assertSame(413, $response['status']);
        self::assertTrue($client->isClosedWithin(3.0));
        $this->assertStillServing();
    }

    public function testAtTheLimitIsAccepted(): void
    {
        $path = '/target?' . str_repeat('q', 1024 - \strlen('GET /target? HTTP/1.1') - 2);
        $response = $this->exchange("GET $path HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertSame(200, $response['status']);
        $body = "POST /echo-info HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" . str_repeat('z', 100000);
        self::assertSame(200, $this->exchange($body)['status']);
    }

    public function testTricklingHeadersAreCutAtTheTotalDeadline(): void
    {
        $client = $this->client();
        $start = microtime(true);
        $request = self::get('/hello', "X-Slow: " . str_repeat('s', 50) . "\r\n");
        $closed = false;
        // One byte every 0.1 s would take ~10 s in all; the header deadline is 1 s in total.
        for ($i = 0; $i < \strlen($request) && microtime(true) - $start < 6.0; $i++) {
            if (!$client->trySend($request[$i])) {
                $closed = true;
                break;
            }
            usleep(100000);
            $peek = @stream_socket_recvfrom($client->socket(), 1, STREAM_PEEK);
            if ($peek !== false && $peek !== '') {
                break;
            }
        }
        $response = $client->readResponse(5.0);
        self::assertNotNull($response, $closed ? 'closed without a 408' : 'no response');
        self::assertSame(408, $response['status']);
        self::assertLessThan(4.0, microtime(true) - $start);
        $this->assertStillServing();
    }

    public function testStalledBodyGets408(): void
    {
        $client = $this->client();
        $client->send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
        $response = $client->readResponse(5.0);
        self::assertNotNull($response);
        self::assertSame(408, $response['status']);
        self::assertTrue($client->isClosedWithin(2.0));
    }

    public function testIdleKeepAliveConnectionIsClosed(): void
    {
        $client = $this->client();
        $client->send(self::get('/hello'));
        self::assertNotNull($client->readResponse());
        self::assertTrue($client->isClosedWithin(4.0), 'idle keep-alive connection should be closed after 1 s');
    }

    public function testSilentConnectionIsClosed(): void
    {
        $client = $this->client();
        self::assertTrue($client->isClosedWithin(4.0), 'a connection that never sends should not be kept');
    }

    public function testClientThatStopsReadingIsDroppedAndOthersAreServed(): void
    {
        $progress = tempnam(sys_get_temp_dir(), 'kiln-progress');
        self::assertIsString($progress);
        $client = $this->client();
        // 64 MiB streamed in 64 KiB chunks to a client that reads nothing.
        $client->send(self::get('/stream?n=1024&size=65536&progress=' . rawurlencode($progress)));
        $this->assertStillServing();
        $deadline = microtime(true) + 3.0;
        $produced = 0;
        while (microtime(true) < $deadline) {
            usleep(200000);
            $produced = (int) @file_get_contents($progress);
            $memory = json_decode($this->exchange(self::get('/memory'))['body'], true);
            self::assertIsArray($memory);
            self::assertLessThan(64 << 20, $memory['usage'], 'the worker must not buffer a slow reader\'s output');
        }
        self::assertLessThan(1024, $produced, 'the producer must be paused, not run to the end');
        @unlink($progress);
        $this->assertStillServing();
    }

    public function testRequestsPastTheConcurrencyBoundGetAFast503(): void
    {
        $clients = [];
        for ($i = 0; $i < 8; $i++) {
            $clients[] = $client = $this->client();
            $client->send(self::get('/sleep?s=1'));
        }
        $started = microtime(true);
        $statuses = [];
        foreach ($clients as $client) {
            $response = $client->readResponse(5.0);
            self::assertNotNull($response);
            $statuses[] = $response['status'];
            if ($response['status'] === 503) {
                self::assertSame('1', $response['headers']['retry-after'][0] ?? null);
            }
            $client->close();
        }
        sort($statuses);
        self::assertSame([200, 200, 200, 200, 200, 503, 503, 503], $statuses);
        self::assertLessThan(3.0, microtime(true) - $started);
        $this->assertStillServing();
    }

    public function testConnectionsOverTheCapGet503(): void
    {
        $held = [];
        for ($i = 0; $i < 20; $i++) {
            $held[] = $c = $this->client();
            $c->send(self::get('/hello'));
            self::assertNotNull($c->readResponse());
        }
        $extra = $this->client();
        $raw = $extra->readUntilClosed(3.0);
        self::assertStringStartsWith('HTTP/1.1 503', $raw);
        foreach ($held as $c) {
            $c->close();
        }
        $this->assertStillServing();
    }

    private function assertStillServing(): void
    {
        $deadline = microtime(true) + 5.0;
        $last = 'no attempt';
        do {
            try {
                $client = RawClient::to($this->server());
                $client->send(self::get('/hello', "Connection: close\r\n"));
                $response = $client->readResponse(2.0);
                if ($response !== null && $response['status'] === 200) {
                    self::assertSame('Hello, World!', $response['body']);
                    return;
                }
                $last = $response === null ? 'no response within 2 s' : "status {$response['status']}";
            } catch (\RuntimeException $e) {
                $last = $e->getMessage();
            }
            usleep(50000);
        } while (microtime(true) < $deadline);
        self::fail("GET /hello got no 200 for 5 s after the limit was hit; the last try: $last");
    }
}
