<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Redis\Internal;

use function Kiln\Loop\async;
use function Kiln\Loop\delay;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutCancellation;
use Kiln\Redis\ConnectException;
use Kiln\Redis\ConnectionLostException;
use Kiln\Redis\ErrorReplyException;
use Kiln\Redis\Internal\Connection;
use Kiln\Redis\Resp\Push;
use PHPUnit\Framework\TestCase;

/**
 * Connection over a socket pair: the test is the server, reads what was written and answers, splitting
 * its replies into single bytes on purpose.
 */
final class ConnectionTest extends TestCase
{
    /** @var resource */
    private mixed $server;
    private Connection $connection;
    /** @var list<mixed> */
    private array $outOfBand = [];
    private int $closed = 0;

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
        $pair = stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        self::assertIsArray($pair);
        [$client, $this->server] = $pair;
        stream_set_blocking($client, false);
        $this->connection = new Connection($client, 'pair', 5.0, onOutOfBand: function (mixed $value): void {
            $this->outOfBand[] = $value;
        }, onClose: function (): void {
            $this->closed++;
        });
    }

    public function testRepliesSplitIntoSingleBytesReachTheirCommandsInOrder(): void
    {
        $results = $this->inLoop(function (): array {
            $a = async(fn() => $this->connection->command(['GET', 'a']));
            $b = async(fn() => $this->connection->command(['INCR', 'n']));
            $c = async(fn() => $this->connection->command(['LRANGE', 'l', 0, -1]));
            $this->expectRequest("*2\r\n\$3\r\nGET\r\n\$1\r\na\r\n*2\r\n\$4\r\nINCR\r\n\$1\r\nn\r\n*4\r\n\$6\r\nLRANGE\r\n\$1\r\nl\r\n\$1\r\n0\r\n\$2\r\n-1\r\n");
            $this->answerByteByByte("\$1\r\nx\r\n:7\r\n*2\r\n\$1\r\np\r\n\$1\r\nq\r\n");

            return [$a->await(), $b->await(), $c->await()];
        });
        self::assertSame(['x', 7, ['p', 'q']], $results);
        self::assertSame(0, $this->connection->inFlight());
    }

    public function testAnErrorReplyIsThrownToItsCommandAloneAndAPipelineKeepsItInPlace(): void
    {
        $this->inLoop(function (): void {
            $failing = async(fn() => $this->connection->command(['INCR', 's']));
            $pipeline = async(fn() => $this->connection->pipeline([['PING'], ['INCR', 's']]));
            $this->readRequest();
            $this->answerByteByByte("-ERR not an integer\r\n+PONG\r\n-ERR again\r\n");
            try {
                $failing->await();
                self::fail('no error');
            } catch (\Throwable $e) {
                self::assertInstanceOf(ErrorReplyException::class, $e);
                self::assertSame('Redis: ERR not an integer', $e->getMessage());
            }
            $replies = $pipeline->await();
            self::assertSame('PONG', $replies[0]);
            self::assertTrue($this->connection->isOpen());
        });
    }

    public function testPushesGoOutOfBandWithoutTakingAReply(): void
    {
        $value = $this->inLoop(function (): mixed {
            $get = async(fn() => $this->connection->command(['GET', 'k']));
            $this->readRequest();
            $this->answerByteByByte(">2\r\n+invalidate\r\n*1\r\n+k\r\n\$1\r\nv\r\n");

            return $get->await();
        });
        self::assertSame('v', $value);
        self::assertEquals([new Push(['invalidate', ['k']])], $this->outOfBand);
    }

    public function testWithoutAnOutOfBandHandlerPushesAreDroppedAndAnUnaskedReplyClosesTheConnection(): void
    {
        $pair = stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        self::assertIsArray($pair);
        [$client, $this->server] = $pair;
        $this->connection = new Connection($client, 'pair', 5.0);
        $value = $this->inLoop(function (): mixed {
            $get = async(fn() => $this->connection->command(['GET', 'k']));
            $this->readRequest();
            $this->answerByteByByte(">2\r\n+invalidate\r\n*1\r\n+k\r\n\$1\r\nv\r\n");
            $value = $get->await();
            $this->answerByteByByte("+surprise\r\n");
            delay(0.02);

            return $value;
        });
        self::assertSame('v', $value);
        self::assertFalse($this->connection->isOpen(), 'a reply nobody asked for means the stream is out of step');
    }

    public function testWhenThePeerClosesEveryCommandInFlightFailsAndNothingIsSentAgain(): void
    {
        $errors = $this->inLoop(function (): array {
            $futures = [];
            for ($i = 0; $i < 3; $i++) {
                $futures[] = async(fn() => $this->connection->command(['INCR', 'n']));
            }
            $this->readRequest();
            $this->answerByteByByte(':1');
            fclose($this->server);
            $errors = [];
            foreach ($futures as $future) {
                try {
                    $future->await();
                } catch (\Throwable $e) {
                    $errors[] = $e::class . ': ' . $e->getMessage();
                }
            }

            return $errors;
        });
        self::assertSame(array_fill(0, 3, ConnectionLostException::class . ': Redis at pair closed the connection'), $errors);
        self::assertSame(1, $this->closed);
        $this->expectException(ConnectException::class);
        $this->expectExceptionMessage('The connection to Redis at pair is closed (Redis at pair closed the connection); the command was not sent');
        $this->connection->command(['PING']);
    }

    public function testMalformedDataClosesTheConnectionWithAClearReason(): void
    {
        $error = $this->inLoop(function (): \Throwable {
            $get = async(fn() => $this->connection->command(['GET', 'k']));
            $this->readRequest();
            $this->answerByteByByte("?oops\r\n");
            try {
                $get->await();
            } catch (\Throwable $e) {
                return $e;
            }
            self::fail('no error');
        });
        self::assertInstanceOf(ConnectionLostException::class, $error);
        self::assertStringContainsString('sent malformed data: Unknown RESP type byte 0x3f', $error->getMessage());
        self::assertFalse($this->connection->isOpen());
    }

    /**
     * @template T
     *
     * @param \Closure(): T $body
     *
     * @return T
     */
    private function inLoop(\Closure $body): mixed
    {
        return async($body)->await(new TimeoutCancellation(10.0));
    }

    private function readRequest(): string
    {
        delay(0.01);
        $data = '';
        stream_set_blocking($this->server, false);
        while (($chunk = fread($this->server, 65536)) !== '' && $chunk !== false) {
            $data .= $chunk;
        }

        return $data;
    }

    private function expectRequest(string $expected): void
    {
        self::assertSame($expected, $this->readRequest(), 'all commands of one tick go out in one write, in order');
    }

    private function answerByteByByte(string $bytes): void
    {
        foreach (str_split($bytes) as $byte) {
            fwrite($this->server, $byte);
            delay(0.001);
        }
    }
}
