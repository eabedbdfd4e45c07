<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\WebSocket;

use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\WebSocket\Close;
use Kiln\Http\WebSocket\DeflateOptions;
use Kiln\Http\WebSocket\Handshake;
use Kiln\Http\WebSocket\HandshakeOptions;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\PerMessageDeflate;
use Kiln\Http\WebSocket\Ping;
use Kiln\Http\WebSocket\Protocol;
use Kiln\Http\WebSocket\WebSocketLimits;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\RequestParser;
use Kiln\Http\Wire\ResponseEncoder;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * The protocol layer against an independent client: Debian's python3-websockets, through its own sans-I/O
 * layer (no sockets on either side). Python makes the handshake request, the frames (masked, fragmented,
 * compressed per its own reading of RFC 7692) and checks the server's answers with its own parser and
 * negotiation; the server side is Handshake and Protocol, echoing what it receives.
 */
final class PythonClientTest extends TestCase
{
    private const PYTHON = '/usr/bin/python3';

    /** @return iterable<string, array{array<string, mixed>, HandshakeOptions, bool}> scenario, options, compressed */
    public static function conversations(): iterable
    {
        yield 'no extension' => [[], new HandshakeOptions(), false];
        yield 'deflate offered, server without deflate' => [['deflate' => []], new HandshakeOptions(), false];
        yield 'deflate, default offer' => [['deflate' => []], new HandshakeOptions(deflate: new DeflateOptions()), true];
        yield 'deflate, no context takeover asked both ways' => [
            ['deflate' => ['server_no_context_takeover' => true, 'client_no_context_takeover' => true]],
            new HandshakeOptions(deflate: new DeflateOptions()),
            true,
        ];
        yield 'deflate, small windows asked by the client' => [
            ['deflate' => ['server_max_window_bits' => 10, 'client_max_window_bits' => 9]],
            new HandshakeOptions(deflate: new DeflateOptions()),
            true,
        ];
        yield 'deflate, everything limited by the server' => [
            ['deflate' => []],
            new HandshakeOptions(deflate: new DeflateOptions(true, true, 9, 9, 1, 1)),
            true,
        ];
        yield 'deflate, server window 8 asked: declined' => [
            ['deflate' => ['server_max_window_bits' => 8]],
            new HandshakeOptions(deflate: new DeflateOptions()),
            false,
        ];
        yield 'subprotocols' => [['subprotocols' => ['chat.v1', 'chat.v2']], new HandshakeOptions(subprotocols: ['chat.v2', 'chat.v1']), false];
        yield 'allowed origin' => [['origin' => 'https://app.example'], new HandshakeOptions(allowedOrigins: ['https://app.example']), false];
    }

    /**
     * @param array<string, mixed> $scenario
     */
    #[DataProvider('conversations')]
    public function testAConversationWithPythonWebsocketsRoundTrips(array $scenario, HandshakeOptions $options, bool $compressed): void
    {
        $messages = [
            ['text', 'Hello', 1],
            ['text', 'ünïcödé ✓ 😀 split inside characters', 5],
            ['binary', random_bytes(1000), 3],
            ['text', '', 1],
            ['text', str_repeat('{"type":"chat","text":"again and again"}', 2000), 4],
            ['binary', '', 1],
            ['text', 'Hello', 1],
        ];
        $scenario['messages'] = array_map(static fn(array $m): array => ['kind' => $m[0], 'hex' => bin2hex($m[1]), 'parts' => $m[2]], $messages);
        $client = new PythonClient(self::PYTHON, __DIR__ . '/python_client.py', $scenario);
        try {
            $outcome = Handshake::negotiate(self::request($client->expectSend()), $options);
            self::assertTrue($outcome->accepted, $outcome->reason);
            $client->receive((new ResponseEncoder())->head(101, $outcome->headers, null, '1.1', true));
            $handshake = $client->report();
            self::assertSame([101, true, null], [$handshake['status'], $handshake['accepted'], $handshake['error']]);
            self::assertSame($compressed ? ['PerMessageDeflate'] : [], $handshake['extensions']);
            self::assertSame($compressed, $outcome->deflate !== null);
            self::assertSame($outcome->subprotocol, $handshake['subprotocol']);

            $sent = $client->expectSend();
            $protocol = new Protocol(new WebSocketLimits(), $outcome->deflate);
            $events = $protocol->feed($sent);
            self::assertSame(self::describe($events), self::describe(self::byteByByte($sent, $outcome->deflate)), 'byte by byte');
            $answer = '';
            $received = [];
            foreach ($events as $event) {
                if ($event instanceof Message) {
                    $received[] = [$event->binary ? 'binary' : 'text', $event->payload];
                    $answer .= $protocol->encodeMessage($event->payload, $event->binary);
                } elseif ($event instanceof Ping) {
                    $answer .= $protocol->encodePong($event->payload);
                } else {
                    self::fail('Unexpected ' . $event::class);
                }
            }
            self::assertSame(array_map(static fn(array $m): array => [$m[0], $m[1]], $messages), $received);

            $client->receive($answer);
            $frames = $client->report()['frames'];
            self::assertIsArray($frames);
            $expected = [];
            foreach ($messages as [$kind, $payload, $parts]) {
                for ($i = 1; $i < $parts; $i++) {
                    $expected[] = [10, bin2hex('between fragments'), true];
                }
                $expected[] = [$kind === 'text' ? 1 : 2, bin2hex($payload), true];
            }
            self::assertSame($expected, $frames, 'what python read of the server frames');

            $events = $protocol->feed($client->expectSend());
            self::assertCount(1, $events);
            self::assertInstanceOf(Close::class, $events[0]);
            self::assertSame([1000, 'bye'], [$events[0]->code, $events[0]->reason]);
            $client->receive($protocol->encodeClose($events[0]->code, $events[0]->reason));
            $closing = $client->report();
            self::assertSame([1000, 'bye'], [$closing['code'], $closing['reason']]);
        } finally {
            $client->stop();
        }
    }

    public function testAnOriginOutsideTheListIsRefusedAndPythonSeesTheStatus(): void
    {
        $client = new PythonClient(self::PYTHON, __DIR__ . '/python_client.py', ['origin' => 'https://evil.example', 'messages' => []]);
        try {
            $outcome = Handshake::negotiate(self::request($client->expectSend()), new HandshakeOptions(allowedOrigins: ['https://app.example']));
            self::assertSame(403, $outcome->status);
            $client->receive((new ResponseEncoder())->head(403, [], 0, '1.1', false));
            $report = $client->report();
            self::assertSame([403, false], [$report['status'], $report['accepted']]);
        } finally {
            $client->stop();
        }
    }

    /**
     * @param list<Message|Ping|\Kiln\Http\WebSocket\Pong|Close|\Kiln\Http\WebSocket\ProtocolViolation> $events
     * @return list<string>
     */
    private static function describe(array $events): array
    {
        return array_map(static fn(object $e): string => $e::class . ':' . md5(serialize($e)), $events);
    }

    /** @return list<Message|Ping|\Kiln\Http\WebSocket\Pong|Close|\Kiln\Http\WebSocket\ProtocolViolation> */
    private static function byteByByte(string $bytes, ?PerMessageDeflate $agreed): array
    {
        $deflate = $agreed === null ? null : new PerMessageDeflate($agreed->serverNoContextTakeover, $agreed->clientNoContextTakeover, $agreed->serverWindowBits, $agreed->clientWindowBits);
        $protocol = new Protocol(new WebSocketLimits(), $deflate);
        $events = [];
        foreach (str_split($bytes) as $byte) {
            array_push($events, ...$protocol->feed($byte));
        }
        return $events;
    }

    private static function request(string $bytes): Request
    {
        $parser = new RequestParser(new Limits());
        $parser->feed($bytes);
        $head = $parser->next();
        self::assertInstanceOf(RequestHead::class, $head);
        return new Request($head, '', null, '127.0.0.1', 40000);
    }
}
