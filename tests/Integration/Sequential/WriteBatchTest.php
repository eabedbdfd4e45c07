<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;

/**
 * Responses finished in one loop turn leave together (Kiln\Http\WriteBatch), but a script that may be slow
 * does not hold back the responses finished before it: the sequential tier sends them before it starts one
 * it has not run yet or that took 1 ms or more last time.
 */
final class WriteBatchTest extends SequentialTestCase
{
    public function testASlowScriptDoesNotHoldBackTheResponseFinishedBeforeIt(): void
    {
        $server = $this->server();
        for ($i = 0; $i < 3; $i++) {
            self::assertSame('Hello, World!', $this->get('/hello.php')['body']); // known as quick from now on
        }
        // Three connections of the one worker, accepted in this order.
        [$busy, $quick, $slow] = [RawClient::to($server), RawClient::to($server), RawClient::to($server)];
        foreach ([$busy, $quick, $slow] as $client) {
            $client->send("GET /hello.php HTTP/1.1\r\nHost: test\r\n\r\n");
            self::assertSame(200, $client->readResponse()['status'] ?? null);
        }
        $mark = 'kiln-batch-' . getmypid();
        $file = sys_get_temp_dir() . "/$mark";
        @unlink($file);
        $busy->send("GET /nap.php?ms=300&mark=$mark HTTP/1.1\r\nHost: test\r\n\r\n");
        $deadline = microtime(true) + 5.0;
        while (!file_exists($file) && microtime(true) < $deadline) {
            usleep(2000);
        }
        self::assertFileExists($file, 'the worker did not start the first nap');
        @unlink($file);
        // Both arrive while the worker naps: it finds them ready together and runs the quick one first.
        $quick->send("GET /hello.php HTTP/1.1\r\nHost: test\r\n\r\n");
        $slow->send("GET /nap.php?ms=2000 HTTP/1.1\r\nHost: test\r\n\r\n");
        $sent = microtime(true);
        $response = $quick->readResponse(1.5);
        self::assertNotNull($response, 'the quick response waited for the slow script after it');
        self::assertSame('Hello, World!', $response['body']);
        self::assertLessThan(1.5, microtime(true) - $sent);
        self::assertSame('rested', $busy->readResponse()['body'] ?? null);
        self::assertSame('rested', $slow->readResponse(5.0)['body'] ?? null);
    }

    public function testAScriptThatRunsPastTheWriteTimeoutStillGetsItsResponseOut(): void
    {
        // The write timeout counts from the first write tried, not from when the response was queued.
        $this->server = KilnProcess::start(self::APP, ['--workers=1', '--limit-write-timeout=0.5']);
        $response = $this->request('GET', '/nap.php?ms=1200');
        self::assertSame(200, $response['status']);
        self::assertSame('rested', $response['body']);
    }

    public function testPipelinedRequestsAreAnsweredInOrderAndWhole(): void
    {
        $client = RawClient::to($this->server());
        $client->send(str_repeat("GET /hello.php HTTP/1.1\r\nHost: test\r\n\r\n", 20) . "GET /nap.php?ms=1 HTTP/1.1\r\nHost: test\r\n\r\n");
        for ($i = 0; $i < 20; $i++) {
            self::assertSame('Hello, World!', $client->readResponse()['body'] ?? null, "response $i");
        }
        self::assertSame('rested', $client->readResponse()['body'] ?? null);
    }
}
