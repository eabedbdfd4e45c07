<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;

use function Kiln\Loop\delay;

use Kiln\Loop\Loop;
use Kiln\Tests\Support\RawWebSocket;

/** Handshake hand-off, messages in order, handler failures and refusals. */
final class WebSocketServerTest extends WebSocketServerTestCase
{
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
}
