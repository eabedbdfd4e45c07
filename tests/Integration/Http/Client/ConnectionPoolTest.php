<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http\Client;

use Kiln\Http\Client\ClientException;
use Kiln\Http\Client\ClientOptions;
use Kiln\Http\Client\HttpClient;

use function Kiln\Loop\delay;

use Kiln\Loop\Loop;

/** Keep-alive reuse, concurrency, per-host limits, eviction and safe retries. */
final class ConnectionPoolTest extends ClientTestCase
{
    private string $base = '';

    protected function setUp(): void
    {
        parent::setUp();
        $this->base = $this->startServer();
    }

    public function testSequentialRequestsReuseOneKeepAliveConnection(): void
    {
        $client = new HttpClient();
        $ids = $this->inLoop(function () use ($client): array {
            $ids = [];
            for ($i = 0; $i < 5; $i++) {
                $response = $client->get("{$this->base}/hello");
                self::assertSame('hello', $response->body());
                $ids[] = $response->header('X-Conn-Id');
                $accepted = $response->header('x-accepted');
            }
            self::assertSame('1', $accepted ?? null, 'The server must have accepted exactly one connection');

            return $ids;
        });
        self::assertSame(['1', '1', '1', '1', '1'], $ids);
    }

    public function testConcurrentRequestsFromSeveralFibersOverlap(): void
    {
        $client = new HttpClient();
        $started = \microtime(true);
        $this->inLoop(function () use ($client): void {
            $done = 0;
            $suspension = Loop::getSuspension();
            for ($i = 0; $i < 3; $i++) {
                Loop::async(function () use ($client, &$done, $suspension): void {
                    self::assertSame('waited', $client->get("{$this->base}/wait?ms=500")->body());
                    if (++$done === 3) {
                        $suspension->resume();
                    }
                });
            }
            $suspension->suspend();
        });
        $elapsed = \microtime(true) - $started;
        self::assertLessThan(1.2, $elapsed, 'Three 0.5 s requests must run concurrently, not one after another');
        self::assertGreaterThanOrEqual(0.5, $elapsed);
    }

    public function testServerClosedIdleConnectionIsTransparentlyReplaced(): void
    {
        $client = new HttpClient();
        $this->inLoop(function () use ($client): void {
            $first = $client->get("{$this->base}/close");
            self::assertSame('bye', $first->body());
            delay(0.15); // the server closes its side 50 ms after answering
            $second = $client->get("{$this->base}/hello");
            self::assertSame('hello', $second->body());
            self::assertSame('2', $second->header('x-conn-id'));
            // Without waiting: the request may be written before the FIN is seen; an idempotent GET is resent.
            $client->get("{$this->base}/close")->body();
            self::assertSame('3', $client->get("{$this->base}/hello")->header('x-conn-id'));
        });
    }

    public function testOnlyIdempotentRequestsAreResentAfterAReusedConnectionDrops(): void
    {
        $client = new HttpClient();
        $this->inLoop(function () use ($client): void {
            $client->get("{$this->base}/hello")->body();
            try {
                $client->post("{$this->base}/drop", 'once');
                self::fail('The dropped POST must fail');
            } catch (ClientException) {
            }
            $check = $client->get("{$this->base}/hello");
            $check->body();
            self::assertSame('2', $check->header('x-accepted'), 'The POST must not have been resent');
            try {
                $client->get("{$this->base}/drop");
                self::fail('The dropped GET must fail after one retry');
            } catch (ClientException $e) {
                self::assertStringContainsString('closed the connection', $e->getMessage());
            }
            self::assertSame('4', $client->get("{$this->base}/hello")->header('x-accepted'), 'The GET must have been resent exactly once');
        });
    }

    public function testMaxConnectionsPerHostQueuesRequests(): void
    {
        $client = new HttpClient(new ClientOptions(maxConnectionsPerHost: 1));
        $ids = $this->inLoop(function () use ($client): array {
            $ids = [];
            $suspension = Loop::getSuspension();
            for ($i = 0; $i < 3; $i++) {
                Loop::async(function () use ($client, &$ids, $suspension): void {
                    $response = $client->get("{$this->base}/wait?ms=50");
                    $response->body();
                    $ids[] = $response->header('x-conn-id');
                    if (\count($ids) === 3) {
                        $suspension->resume();
                    }
                });
            }
            $suspension->suspend();

            return $ids;
        });
        self::assertSame(['1', '1', '1'], $ids);
    }

    public function testIdleConnectionsAreEvictedAfterTheIdleTimeout(): void
    {
        $client = new HttpClient(new ClientOptions(idleTimeout: 0.1));
        $this->inLoop(function () use ($client): void {
            $client->get("{$this->base}/hello")->body();
            delay(0.3);
            self::assertSame('2', $client->get("{$this->base}/hello")->header('x-conn-id'));
        });
    }
}
