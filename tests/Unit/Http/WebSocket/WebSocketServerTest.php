<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\Internal\CoreState;
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

use function Kiln\Loop\delay;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Server\AcceptBalance;
use Kiln\Server\WorkerContext;
use Kiln\Tests\Support\RawWebSocket;
use PHPUnit\Framework\TestCase;

/**
 * The connection state machine through a stream seam: the 101's socket hand-off is given one end of a socket
 * pair, the test plays the client on the other end and runs the loop until what it waits for happened. The
 * server is started by an HTTP core, as HttpServer starts it: the core's drain and stop reach the connections.
 */
final class WebSocketServerTest extends TestCase
{
    /** @var \ArrayObject<int, string> what the handler saw, in order */
    private \ArrayObject $events;

    /** @var \ArrayObject<int, string> */
    private \ArrayObject $logged;

    /** @var \ArrayObject<string, int> */
    private \ArrayObject $counts;

    private string $received = '';

    /** @var resource|null the client's end */
    private $client = null;

    private ?HttpCore $core = null;

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

    public function testFramesSentInOnOpenFollowThe101AndMessagesAreEchoedInOrder(): void
    {
        $server = $this->server(new Limits());
        $this->open($server, $this->handler(onOpen: fn(Connection $c) => $c->send('welcome')));
        $this->client(RawWebSocket::frame(0x1, 'one') . RawWebSocket::frame(0x2, 'two'));
        $this->runUntil(fn(): bool => \count($this->frames()) >= 3);
        self::assertSame([[0x1, 'welcome'], [0x1, 'echo one'], [0x2, 'echo two']], \array_slice($this->frames(), 0, 3));
    }

    public function testTheHandshakeRequestIsKeptWhileOnOpenRunsAndLetGoAfterItSoAnIdleConnectionStaysSmall(): void
    {
        $server = $this->server(new Limits());
        $seen = new \ArrayObject();
        $this->open($server, $this->handler(
            onOpen: function (Connection $c, Request $r) use ($seen): void {
                $seen['same'] = $c->request() === $r;
            },
            onMessage: function (Connection $c) use ($seen): void {
                try {
                    $c->request();
                    $seen['after'] = 'kept';
                } catch (\Error $e) {
                    $seen['after'] = $e->getMessage();
                }
                $seen['address'] = $c->remoteAddress();
            },
        ));
        $this->client(RawWebSocket::frame(0x1, 'hi'));
        $this->runUntil(fn(): bool => isset($seen['address']));
        self::assertTrue($seen['same']);
        self::assertStringContainsString('only kept while onOpen() runs', (string) $seen['after']);
        self::assertSame('127.0.0.1', $seen['address']);
    }

    public function testMessagesAreHandledOneAtATimeInOrderWhileTheHandlerSuspends(): void
    {
        $running = 0;
        $most = 0;
        $server = $this->server(new Limits());
        $this->open($server, $this->handler(onMessage: function (Connection $c, Message $m) use (&$running, &$most): void {
            $most = max($most, ++$running);
            delay(\strlen($m->payload) % 2 === 0 ? 0.01 : 0.0);
            $this->events[] = $m->payload;
            $running--;
        }));
        $frames = '';
        foreach (range(1, 12) as $i) {
            $frames .= RawWebSocket::frame(0x1, str_repeat('m', $i));
        }
        $this->client($frames);
        $this->runUntil(fn(): bool => \count($this->events) >= 13);
        self::assertSame(['open', ...array_map(static fn(int $i): string => str_repeat('m', $i), range(1, 12))], $this->events->getArrayCopy());
        self::assertSame(1, $most);
    }

    public function testTheClientsCloseIsEchoedAndOnCloseIsToldOnceAfterTheLastMessage(): void
    {
        $server = $this->server(new Limits());
        $this->open($server, $this->handler());
        $this->client(RawWebSocket::frame(0x1, 'last') . RawWebSocket::frame(0x8, pack('n', 4001) . 'bye'));
        $this->runUntil(fn(): bool => $server->count() === 0 && \in_array('close 4001 bye', $this->events->getArrayCopy(), true));
        self::assertSame(['open', 'last', 'close 4001 bye'], $this->events->getArrayCopy(), 'the message before the close is handled');
        // The close is answered at once: the handler's reply to 'last' came after it and was not sent.
        self::assertSame([[0x8, pack('n', 4001)]], $this->frames());
        self::assertTrue($this->clientSeesEnd());
        self::assertSame(0, $this->counts['websocket'] ?? null);
    }

    public function testASilentConnectionIsPingedAtHalfTheIdleTimeoutThenClosedWith1001(): void
    {
        $server = $this->server(new Limits(wsIdleTimeout: 0.3));
        $this->open($server, $this->handler());
        $this->runUntil(fn(): bool => \in_array('close 1001 idle timeout', $this->events->getArrayCopy(), true));
        $frames = $this->frames();
        self::assertSame(0x9, $frames[0][0] ?? null, 'a ping first');
        self::assertSame([0x8, pack('n', 1001) . 'idle timeout'], $frames[1] ?? null);
    }

    public function testAConnectionThatAnswersPingsIsKeptOpen(): void
    {
        $server = $this->server(new Limits(wsIdleTimeout: 0.3));
        $this->open($server, $this->handler());
        $until = microtime(true) + 0.8;
        $this->runUntil(function () use ($until): bool {
            foreach ($this->frames() as [$opcode]) {
                if ($opcode === 0x9) {
                    $this->received = '';
                    $this->client(RawWebSocket::frame(0xA, ''));
                }
            }
            return microtime(true) >= $until;
        });
        self::assertSame(1, $server->count());
        self::assertSame(['open'], $this->events->getArrayCopy());
    }

    public function testPingsReadTogetherAreAnsweredWithOnePongForTheLatest(): void
    {
        $server = $this->server(new Limits());
        $this->open($server, $this->handler());
        $pings = '';
        for ($i = 1; $i <= 100; $i++) {
            $pings .= RawWebSocket::frame(0x9, "ping $i");
        }
        $this->client($pings);
        $this->runUntil(fn(): bool => \in_array([0xA, 'ping 100'], $this->frames(), true));
        self::assertSame([[0xA, 'ping 100']], $this->frames());
    }

    public function testWhileTheClientDoesNotReadOnlyTheLatestPingIsAnsweredOnceItDoes(): void
    {
        $server = $this->server(new Limits(wsWriteBuffer: 4 << 20));
        $this->open($server, $this->handler(onMessage: function (Connection $c, Message $m): void {
            $this->events[] = $m->payload;
            if ($m->payload === 'fill') {
                $c->sendBinary(str_repeat('z', 2 << 20)); // more than the socket pair holds: the rest waits
            }
        }));
        $this->client(RawWebSocket::frame(0x1, 'fill'));
        $this->runUntil(fn(): bool => \in_array('fill', $this->events->getArrayCopy(), true));
        // Each ping in a read of its own (the message after it says when it was read), none of them read back.
        foreach (['a', 'b', 'c'] as $ping) {
            $this->client(RawWebSocket::frame(0x9, $ping) . RawWebSocket::frame(0x1, "after $ping"));
            $this->runUntil(fn(): bool => \in_array("after $ping", $this->events->getArrayCopy(), true));
        }
        $this->runUntil(fn(): bool => \in_array([0xA, 'c'], $this->frames(), true));
        $frames = $this->frames();
        self::assertSame([0x2, 0xA], array_column($frames, 0));
        self::assertSame('c', $frames[1][1]);
        self::assertSame(1, $server->count());
    }

    public function testAClientThatKeepsSendingButTakesNothingIsDroppedAfterTheWriteTimeout(): void
    {
        // The idle timeout never comes (the client sends every 50 ms) and the queue stays under its bound.
        $server = $this->server(new Limits(writeTimeout: 0.4, wsWriteBuffer: 4 << 20));
        $this->open($server, $this->handler(onMessage: function (Connection $c, Message $m): void {
            if ($m->payload === 'fill') {
                $c->sendBinary(str_repeat('z', 2 << 20)); // more than the socket pair holds: the rest waits
            }
        }));
        $this->client(RawWebSocket::frame(0x1, 'fill'));
        $next = 0.0;
        $this->runUntil(function () use ($server, &$next): bool {
            if (microtime(true) >= $next && $server->count() > 0) {
                $next = microtime(true) + 0.05;
                $this->client(RawWebSocket::frame(0x1, 'still here'));
            }
            return $server->count() === 0;
        });
        self::assertSame(['open', 'close 1006'], $this->events->getArrayCopy());
        self::assertMatchesRegularExpression('~dropped: nothing of its \d+ queued bytes was taken for --limit-write-timeout=0.4 s~', implode("\n", $this->logged->getArrayCopy()));
    }

    public function testACloseTheClientNeverAnswersIsCutAfterTheCloseTimeout(): void
    {
        $server = $this->server(new Limits(wsCloseTimeout: 0.2));
        $this->open($server, $this->handler(onMessage: fn(Connection $c) => $c->close(4000, 'done')));
        $this->client(RawWebSocket::frame(0x1, 'close me'));
        $this->runUntil(fn(): bool => $server->count() === 0);
        self::assertSame([[0x8, pack('n', 4000) . 'done']], $this->frames());
        self::assertSame(['open', 'close 4000 done'], $this->events->getArrayCopy());
        self::assertTrue($this->clientSeesEnd(), 'the socket was closed');
    }

    public function testAHandlerThatThrowsClosesItsConnectionWith1011AndIsLogged(): void
    {
        $server = $this->server(new Limits());
        $this->open($server, $this->handler(onMessage: fn() => throw new \RuntimeException('boom')));
        $this->client(RawWebSocket::frame(0x1, 'x'));
        $this->runUntil(fn(): bool => \count($this->frames()) >= 1);
        self::assertSame(0x8, $this->frames()[0][0]);
        self::assertSame(pack('n', 1011), substr($this->frames()[0][1], 0, 2));
        self::assertStringContainsString('RuntimeException: boom', implode("\n", $this->logged->getArrayCopy()));
    }

    public function testARefusingOnOpenLeavesNoConnectionAndNoOnClose(): void
    {
        $server = $this->server(new Limits());
        try {
            $server->upgrade(self::handshake(), $this->handler(onOpen: fn() => throw new \DomainException('no')));
            self::fail('the refusal propagates');
        } catch (\DomainException) {
        }
        Loop::delay(0.05, static fn() => Loop::stop());
        Loop::run();
        self::assertSame(0, $server->count());
        self::assertSame(['open'], $this->events->getArrayCopy(), 'no onClose for a connection never opened');
    }

    public function testA101NeverHandedOverEndsTheConnectionAtOnceWith1006(): void
    {
        // The client went away while onOpen() ran: the HTTP core drops the 101 without handing the socket over.
        $server = $this->server(new Limits());
        $response = $server->upgrade(self::handshake(), $this->handler());
        self::assertSame(1, $server->count());
        unset($response);
        $this->runUntil(fn(): bool => $server->count() === 0 && \in_array('close 1006', $this->events->getArrayCopy(), true));
        self::assertSame(['open', 'close 1006'], $this->events->getArrayCopy());
        self::assertSame(0, $this->counts['websocket'] ?? null);
    }

    public function testA101NeverHandedOverAfterOnOpenClosedEndsTheConnectionWithThatClose(): void
    {
        $server = $this->server(new Limits());
        $response = $server->upgrade(self::handshake(), $this->handler(onOpen: fn(Connection $c) => $c->close(4000, 'not now')));
        unset($response);
        $this->runUntil(fn(): bool => $server->count() === 0 && \count($this->events) === 2);
        self::assertSame(['open', 'close 4000 not now'], $this->events->getArrayCopy());
    }

    public function testAClientThatStopsReadingIsClosedWith1008AndTheQueueStaysBounded(): void
    {
        $server = $this->server(new Limits(wsWriteBuffer: 65536));
        $sent = [];
        $this->open($server, $this->handler(onMessage: function (Connection $c) use (&$sent): void {
            for ($i = 0; $i < 400; $i++) {
                $sent[] = $c->sendBinary(str_repeat('z', 16384));
                delay(0.0);
            }
        }));
        $this->client(RawWebSocket::frame(0x1, 'flood me'));
        $this->runUntil(function () use (&$sent): bool {
            return \in_array(false, $sent, true) && \in_array('close 1008 slow consumer: output buffer full', $this->events->getArrayCopy(), true);
        });
        self::assertStringContainsString('closed with 1008', implode("\n", $this->logged->getArrayCopy()));
        self::assertLessThan(400, \count(array_filter($sent)));
    }

    public function testADrainClosesWith1001BeforeItsDeadlineAndSaysWhenNoneIsLeft(): void
    {
        $server = $this->server(new Limits());
        $this->open($server, $this->handler());
        /** @var \ArrayObject<int, bool> $empty */
        $empty = new \ArrayObject();
        $this->core()->startDraining(function () use ($empty): void {
            $empty[] = true;
        });
        $this->runUntil(fn(): bool => \count($this->frames()) >= 1);
        self::assertSame([0x8, pack('n', 1001) . 'server shutting down'], $this->frames()[0]);
        self::assertCount(0, $empty);
        $this->client(RawWebSocket::frame(0x8, pack('n', 1001)));
        $this->runUntil(fn(): bool => \count($empty) > 0);
        self::assertCount(1, $empty);
        self::assertSame(['open', 'close 1001 server shutting down'], $this->events->getArrayCopy());
        self::assertSame(CoreState::Stopped, $this->core()->state());
    }

    public function testAConnectionUpgradedDuringADrainIsWaitedForAndGetsTheDrainsClose(): void
    {
        $server = $this->server(new Limits());
        // A client whose request is being served when the drain begins (an idle connection: the drain's grace keeps it).
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertIsArray($pair);
        stream_set_blocking($pair[0], false);
        $http = $this->core()->open($pair[0], '127.0.0.1', 40001);
        /** @var \ArrayObject<int, bool> $empty */
        $empty = new \ArrayObject();
        $this->core()->startDraining(function () use ($empty): void {
            $empty[] = true;
        }, 5.0);
        self::assertSame(0, $server->count(), 'no WebSocket connection yet: nothing held the drain back');
        $this->open($server, $this->handler()); // its handler upgrades
        $http->close(); // the HTTP connection handed its socket over
        fclose($pair[1]);
        $this->runUntil(fn(): bool => \count($this->frames()) >= 1 || \count($empty) > 0);
        self::assertCount(0, $empty, 'the drain waits for the WebSocket connection');
        self::assertSame([0x8, pack('n', 1001) . 'server shutting down'], $this->frames()[0]);
        $this->client(RawWebSocket::frame(0x8, pack('n', 1001)));
        $this->runUntil(fn(): bool => \count($empty) > 0);
        self::assertCount(1, $empty);
    }

    public function testStopSends1001AndClosesAtOnce(): void
    {
        $server = $this->server(new Limits());
        $this->open($server, $this->handler());
        $this->core()->stop();
        self::assertSame([[0x8, pack('n', 1001) . 'server stopping']], $this->frames());
        self::assertTrue($this->clientSeesEnd());
        self::assertSame(0, $server->count());
    }

    private function server(Limits $limits): WebSocketServer
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

    private function core(): HttpCore
    {
        self::assertNotNull($this->core, 'server() made the core');
        return $this->core;
    }

    private function open(WebSocketServer $server, WebSocketHandler $handler): void
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

    private static function handshake(): Request
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
    private function handler(?\Closure $onOpen = null, ?\Closure $onMessage = null): WebSocketHandler
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

    private function client(string $bytes): void
    {
        \assert(\is_resource($this->client));
        fwrite($this->client, $bytes);
    }

    /** @return list<array{int, string}> opcode and payload of every frame the client got so far */
    private function frames(): array
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

    private function clientSeesEnd(): bool
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
    private function runUntil(\Closure $done): void
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

    private function context(): WorkerContext
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
