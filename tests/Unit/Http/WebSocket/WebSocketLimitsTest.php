<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\Internal\CoreState;
use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;

use function Kiln\Loop\delay;

use Kiln\Tests\Support\RawWebSocket;

/** Pings, the write, close and idle timeouts, a client that stops reading, and the core's drain and stop. */
final class WebSocketLimitsTest extends WebSocketServerTestCase
{
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
}
