<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\Internal\HttpCore;
use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\WebSocketHandler;
use Kiln\Http\WebSocket\WebSocketServer;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\RequestParser;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Server\AcceptBalance;
use Kiln\Server\WorkerContext;
use PHPUnit\Framework\TestCase;

/**
 * The connection state machine through a stream seam: the 101's socket hand-off is given one end of a socket
 * pair, the test plays the client on the other end and runs the loop until what it waits for happened. The
 * server is started by an HTTP core, as HttpServer starts it: the core's drain and stop reach the connections.
 */
abstract class WebSocketServerTestCase extends TestCase
{
    /** @var \ArrayObject<int, string> what the handler saw, in order */
    protected \ArrayObject $events;

    /** @var \ArrayObject<int, string> */
    protected \ArrayObject $logged;

    /** @var \ArrayObject<string, int> */
    protected \ArrayObject $counts;

    protected string $received = '';

    /** @var resource|null the client's end */
    protected $client = null;

    protected ?HttpCore $core = null;

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        $this->events = new \ArrayObject();
        $this->logged = new \ArrayObject();
        $this->counts = new \ArrayObject();
    }

    protected function tearDown(): void
    {
        $this->core?->writeBatch->flush();
        if (\is_resource($this->client)) {
            fclose($this->client);
        }
    }

    protected function server(Limits $limits): WebSocketServer
    {
        $context = $this->context();
        $this->core = new HttpCore(new class implements RequestHandler {
            public function handle(Request $request): Response
            {
                return Response::text('not a WebSocket');
            }
        }, $limits, $context, null);
        $server = new WebSocketServer($limits);
        $server->start($context, $this->core->writeBatch, $this->core->addLongLived(...));
        return $server;
    }

    protected function core(): HttpCore
    {
        self::assertNotNull($this->core, 'server() made the core');
        return $this->core;
    }

    protected function open(WebSocketServer $server, WebSocketHandler $handler): void
    {
        $response = $server->upgrade(self::handshake(), $handler);
        self::assertSame(101, $response->status());
        $takeOver = $response->upgrade();
        self::assertNotNull($takeOver);
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertIsArray($pair);
        [$serverSide, $this->client] = $pair;
        stream_set_blocking($serverSide, false);
        stream_set_blocking($this->client, false);
        $takeOver($serverSide, '');
    }

    protected static function handshake(): Request
    {
        $parser = new RequestParser(new Limits());
        $parser->feed("GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            . "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
        $head = $parser->next();
        self::assertInstanceOf(RequestHead::class, $head);
        return new Request($head, '', null, '127.0.0.1', 40000);
    }

    /**
     * Records every call; onMessage echoes unless given.
     *
     * @param (\Closure(Connection, Request): mixed)|null $onOpen
     * @param (\Closure(Connection, Message): mixed)|null $onMessage
     */
    protected function handler(?\Closure $onOpen = null, ?\Closure $onMessage = null): WebSocketHandler
    {
        return new class ($this->events, $onOpen, $onMessage) implements WebSocketHandler {
            /** @param \ArrayObject<int, string> $events */
            public function __construct(private readonly \ArrayObject $events, private readonly ?\Closure $open, private readonly ?\Closure $message) {}

            public function onOpen(Connection $connection, Request $request): void
            {
                $this->events[] = 'open';
                if ($this->open !== null) {
                    ($this->open)($connection, $request);
                }
            }

            public function onMessage(Connection $connection, Message $message): void
            {
                if ($this->message !== null) {
                    ($this->message)($connection, $message);
                    return;
                }
                $this->events[] = $message->payload;
                $message->binary ? $connection->sendBinary('echo ' . $message->payload) : $connection->send('echo ' . $message->payload);
            }

            public function onClose(Connection $connection, int $code, string $reason): void
            {
                $this->events[] = trim("close $code $reason");
            }
        };
    }

    protected function client(string $bytes): void
    {
        \assert(\is_resource($this->client));
        fwrite($this->client, $bytes);
    }

    /** @return list<array{int, string}> opcode and payload of every frame the client got so far */
    protected function frames(): array
    {
        if (\is_resource($this->client)) {
            while (($data = fread($this->client, 65536)) !== false && $data !== '') {
                $this->received .= $data;
            }
        }
        $frames = [];
        $offset = 0;
        $buffer = $this->received;
        while (\strlen($buffer) - $offset >= 2) {
            $length = \ord($buffer[$offset + 1]) & 0x7f;
            $start = $offset + 2;
            if ($length >= 126) {
                $size = $length === 126 ? 2 : 8;
                $length = 0;
                foreach (str_split(substr($buffer, $start, $size)) as $byte) {
                    $length = ($length << 8) | \ord($byte);
                }
                $start += $size;
            }
            if (\strlen($buffer) < $start + $length) {
                break;
            }
            $frames[] = [\ord($buffer[$offset]) & 0x0f, substr($buffer, $start, $length)];
            $offset = $start + $length;
        }
        return $frames;
    }

    protected function clientSeesEnd(): bool
    {
        \assert(\is_resource($this->client));
        $deadline = microtime(true) + 2.0;
        while (microtime(true) < $deadline) {
            $data = fread($this->client, 65536);
            if ($data === false || ($data === '' && feof($this->client))) {
                return true;
            }
            usleep(10_000);
        }
        return false;
    }

    /** Runs the loop until $done says so; fails after 5 s. */
    protected function runUntil(\Closure $done): void
    {
        $failed = false;
        $check = Loop::repeat(0.005, static function () use ($done): void {
            if ($done()) {
                Loop::stop();
            }
        });
        $limit = Loop::delay(5.0, static function () use (&$failed): void {
            $failed = true;
            Loop::stop();
        });
        Loop::run();
        Loop::cancel($check);
        Loop::cancel($limit);
        self::assertFalse($failed, 'timed out; events: ' . json_encode($this->events->getArrayCopy()) . '; log: ' . implode("\n", $this->logged->getArrayCopy()));
    }

    protected function context(): WorkerContext
    {
        return new class ($this->logged, $this->counts) implements WorkerContext {
            /**
             * @param \ArrayObject<int, string> $logged
             * @param \ArrayObject<string, int> $counts
             */
            public function __construct(private readonly \ArrayObject $logged, private readonly \ArrayObject $counts) {}

            public function requestServed(): void {}

            public function firstRequestBegan(): void {}

            public function log(string $level, string $message): void
            {
                $this->logged[] = "[$level] $message";
            }

            public function workerId(): int
            {
                return 1;
            }

            public function acceptBalance(): ?AcceptBalance
            {
                return null;
            }

            public function sharesListeners(): bool
            {
                return true;
            }

            public function retiring(string $reason): float
            {
                return 0.0;
            }

            public function drainTimeout(): float
            {
                return 0.4;
            }

            public function count(string $name, int $value): void
            {
                $this->counts[$name] = $value;
            }

            public function metrics(): ?\Kiln\Server\Metrics\Registry
            {
                return null;
            }
        };
    }
}
