<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Bus;

use Kiln\Store\RedisBus;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use Kiln\Tests\Support\RedisServer;
use PHPUnit\Framework\TestCase;

/**
 * A worker on `--redis` that ends right after a handler published (here: recycled by --max-requests=1 once its one
 * response is out) hands Redis everything it published before it exits: the queue of its bus is not dropped.
 */
final class RedisBusExitTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/bus/app.php';

    public function testAWorkerThatEndsRightAfterPublishingStillHandsRedisEveryMessage(): void
    {
        $redis = RedisServer::start();
        $kiln = KilnProcess::start(self::APP, ['--workers=1', '--max-requests=1', '--redis=' . $redis->uri()]);
        $listener = self::subscribe($redis, RedisBus::PREFIX . 'burst');
        try {
            $client = RawClient::to($kiln);
            $client->send("POST /burst/burst/5000 HTTP/1.1\r\nHost: kiln.test\r\nContent-Length: 0\r\n\r\n");
            $response = $client->readResponse();
            self::assertNotNull($response);
            self::assertSame(200, $response['status'], $response['body']);
            $kiln->waitForLog('~will be replaced: served 1 requests~', 10);
            $messages = self::read($listener, 5000, 10.0);
            self::assertSame(5000, \count($messages), "every message published before the worker ended reached Redis\n" . $kiln->log());
            self::assertSame('m5000', end($messages), 'in order');
            self::assertDoesNotMatchRegularExpression('~may be lost~', $kiln->log());
        } finally {
            fclose($listener);
            $kiln->stop();
        }
    }

    /** @return resource a connection SUBSCRIBEd to $channel, confirmed */
    private static function subscribe(RedisServer $redis, string $channel)
    {
        $socket = stream_socket_client("tcp://127.0.0.1:{$redis->port}", $errno, $error, 5.0);
        self::assertIsResource($socket, $error);
        fwrite($socket, \sprintf("*2\r\n\$9\r\nSUBSCRIBE\r\n\$%d\r\n%s\r\n", \strlen($channel), $channel));
        stream_set_timeout($socket, 5);
        $confirmed = '';
        while (substr_count($confirmed, "\r\n") < 6) {
            $line = fgets($socket);
            self::assertIsString($line, 'Redis confirmed the subscription');
            $confirmed .= $line;
        }
        return $socket;
    }

    /**
     * The payloads of the pub/sub messages read from $socket until $count arrived or $timeout passed.
     *
     * @param resource $socket
     * @return list<string>
     */
    private static function read($socket, int $count, float $timeout): array
    {
        stream_set_blocking($socket, false);
        $buffer = '';
        $deadline = microtime(true) + $timeout;
        while (microtime(true) < $deadline) {
            $chunk = fread($socket, 1 << 16);
            if (\is_string($chunk) && $chunk !== '') {
                $buffer .= $chunk;
                if (preg_match_all('~\*3\r\n\$7\r\nmessage\r\n\$\d+\r\n[^\r]*\r\n\$\d+\r\n([^\r]*)\r\n~', $buffer) >= $count) {
                    break;
                }
                continue;
            }
            usleep(10_000);
        }
        preg_match_all('~\*3\r\n\$7\r\nmessage\r\n\$\d+\r\n[^\r]*\r\n\$\d+\r\n([^\r]*)\r\n~', $buffer, $matches);
        return $matches[1];
    }
}
