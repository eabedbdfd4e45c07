<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http;

/** Half-close, odd response bodies and statuses, and what a closed connection leaves behind. */
final class ConnectionLifecycleTest extends ServerTestCase
{
    public function testHalfCloseStillGetsTheWholeQueuedResponse(): void
    {
        $size = 32 << 20; // more than the kernel buffers hold: most of it is still queued in the worker
        $client = $this->client();
        $client->send(self::get("/big?size=$size"));
        stream_socket_shutdown($client->socket(), STREAM_SHUT_WR);
        usleep(300000); // the worker sees the EOF while the response is still queued
        $response = $client->readResponse(10.0);
        self::assertNotNull($response);
        self::assertSame($size, \strlen($response['body']));
        self::assertTrue($client->isClosedWithin(2.0));
    }

    public function testRequestsPipelinedBeforeAHalfCloseAreAllAnswered(): void
    {
        $client = $this->client();
        $client->send(self::get('/sleep?s=0.3') . self::get('/hello') . self::get('/target?n=3'));
        stream_socket_shutdown($client->socket(), STREAM_SHUT_WR);
        $bodies = [];
        while (($response = $client->readResponse(3.0)) !== null) {
            $bodies[] = $response['body'];
        }
        self::assertCount(3, $bodies);
        self::assertSame(['slept', 'Hello, World!'], \array_slice($bodies, 0, 2));
        self::assertStringContainsString('n=3', $bodies[2]);
    }

    public function testAnInterimStatusAsTheFinalResponseIsA500(): void
    {
        foreach ([100, 101, 103] as $code) {
            $client = $this->client();
            $client->send(self::get("/status?code=$code"));
            $response = $client->readResponse(3.0);
            self::assertNotNull($response);
            self::assertSame(500, $response['status'], "status $code");
            $client->close();
        }
    }

    public function testABodyThatIsNotAnOpenStreamIsA500AndTheWorkerSurvives(): void
    {
        $pid = $this->exchange(self::get('/pid'))['body'];
        $client = $this->client();
        $client->send(self::get('/closed-stream'));
        $response = $client->readResponse(3.0);
        self::assertNotNull($response);
        self::assertSame(500, $response['status']);
        $client->close();
        self::assertSame($pid, $this->exchange(self::get('/pid'))['body'], 'the worker must not crash');
    }

    public function testAPipeBodyIsStreamedWithoutBlockingTheWorker(): void
    {
        $slow = $this->client();
        $slow->send(self::get('/pipe?s=1'));
        usleep(200000);
        $started = microtime(true);
        self::assertSame('Hello, World!', $this->exchange(self::get('/hello'))['body']);
        self::assertLessThan(0.5, microtime(true) - $started, 'the one worker waited for the pipe');
        $response = $slow->readResponse(5.0);
        self::assertNotNull($response);
        self::assertSame('piped', $response['body']);
        $slow->close();
    }

    public function testClosedConnectionsAreFreedWithoutWaitingForTheCycleCollector(): void
    {
        // Below the collector's threshold, so any Connection kept alive by a reference cycle is still there.
        for ($i = 0; $i < 500; $i++) {
            $socket = stream_socket_client('tcp://' . $this->server()->host() . ':' . $this->server()->port());
            self::assertIsResource($socket);
            fclose($socket);
        }
        usleep(300000);
        $before = json_decode($this->exchange(self::get('/memory'))['body'], true);
        $after = json_decode($this->exchange(self::get('/memory?gc=1'))['body'], true);
        self::assertIsArray($before);
        self::assertIsArray($after);
        self::assertLessThan(100_000, $before['usage'] - $after['usage'], 'garbage cycles were left by closed connections');
    }
}
