<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\Request;
use Kiln\Http\WebSocket\DeflateOptions;
use Kiln\Http\WebSocket\Handshake;
use Kiln\Http\WebSocket\HandshakeOptions;
use Kiln\Http\WebSocket\HandshakeOutcome;
use Kiln\Http\WebSocket\Internal\DeflateNegotiation;
use Kiln\Http\Wire\RequestHead;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** RFC 7692 §5 and §7.1: agreeing on permessage-deflate from the client's offers. */
final class DeflateNegotiationTest extends TestCase
{
    /** @return iterable<string, array{0: list<string>, 1: string, 2?: DeflateOptions}> */
    public static function accepted(): iterable
    {
        yield 'bare offer' => [['permessage-deflate'], 'permessage-deflate'];
        yield 'name in capitals' => [['PerMessage-Deflate'], 'permessage-deflate'];
        yield 'client window without value, default options' => [['permessage-deflate; client_max_window_bits'], 'permessage-deflate'];
        yield 'client window without value, server limits it' => [['permessage-deflate; client_max_window_bits'], 'permessage-deflate; client_max_window_bits=10', new DeflateOptions(clientMaxWindowBits: 10)];
        yield 'client window with value' => [['permessage-deflate; client_max_window_bits=12'], 'permessage-deflate; client_max_window_bits=12'];
        yield 'client window with value, server lower' => [['permessage-deflate; client_max_window_bits=12'], 'permessage-deflate; client_max_window_bits=11', new DeflateOptions(clientMaxWindowBits: 11)];
        yield 'client window 8' => [['permessage-deflate; client_max_window_bits=8'], 'permessage-deflate; client_max_window_bits=8'];
        yield 'quoted value' => [['permessage-deflate; client_max_window_bits="12"'], 'permessage-deflate; client_max_window_bits=12'];
        yield 'server window asked' => [['permessage-deflate; server_max_window_bits=10'], 'permessage-deflate; server_max_window_bits=10'];
        yield 'server window asked, server lower' => [['permessage-deflate; server_max_window_bits=12'], 'permessage-deflate; server_max_window_bits=9', new DeflateOptions(serverMaxWindowBits: 9)];
        yield 'server window set by the server alone' => [['permessage-deflate'], 'permessage-deflate; server_max_window_bits=11', new DeflateOptions(serverMaxWindowBits: 11)];
        yield 'server no context takeover asked' => [['permessage-deflate; server_no_context_takeover'], 'permessage-deflate; server_no_context_takeover'];
        yield 'server no context takeover by the server alone' => [['permessage-deflate'], 'permessage-deflate; server_no_context_takeover', new DeflateOptions(serverNoContextTakeover: true)];
        yield 'client no context takeover offered is only a hint' => [['permessage-deflate; client_no_context_takeover'], 'permessage-deflate'];
        yield 'client no context takeover asked by the server' => [['permessage-deflate'], 'permessage-deflate; client_no_context_takeover', new DeflateOptions(clientNoContextTakeover: true)];
        yield 'everything' => [
            ['permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=10'],
            'permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=10',
            new DeflateOptions(clientNoContextTakeover: true),
        ];
        yield 'other extension first' => [['x-webkit-deflate-frame, permessage-deflate'], 'permessage-deflate'];
        yield 'second offer after an unknown parameter' => [['permessage-deflate; foo=1, permessage-deflate; client_max_window_bits=9'], 'permessage-deflate; client_max_window_bits=9'];
        yield 'second offer after server window 8' => [['permessage-deflate; server_max_window_bits=8', 'permessage-deflate'], 'permessage-deflate'];
        yield 'offers over two fields' => [['x-other; a=1', 'permessage-deflate; server_max_window_bits=12'], 'permessage-deflate; server_max_window_bits=12'];
        yield 'spaces around everything' => [[" permessage-deflate ;\tserver_max_window_bits = 12 , "], 'permessage-deflate; server_max_window_bits=12'];
    }

    /** @param list<string> $offers */
    #[DataProvider('accepted')]
    public function testAnAcceptableOfferIsAnsweredWithItsParameters(array $offers, string $response, DeflateOptions $options = new DeflateOptions()): void
    {
        $outcome = self::negotiate($offers, $options);
        self::assertTrue($outcome->accepted);
        self::assertSame($response, $outcome->headers['Sec-WebSocket-Extensions'] ?? null);
        self::assertNotNull($outcome->deflate);
    }

    /** @return iterable<string, array{list<string>}> */
    public static function declined(): iterable
    {
        yield 'unknown parameter' => [['permessage-deflate; foo']];
        yield 'server window 8' => [['permessage-deflate; server_max_window_bits=8']];
        yield 'server window without value' => [['permessage-deflate; server_max_window_bits']];
        yield 'server window 16' => [['permessage-deflate; server_max_window_bits=16']];
        yield 'server window 7' => [['permessage-deflate; server_max_window_bits=7']];
        yield 'server window with leading zero' => [['permessage-deflate; server_max_window_bits=09']];
        yield 'client window not a number' => [['permessage-deflate; client_max_window_bits=big']];
        yield 'client window empty quoted' => [['permessage-deflate; client_max_window_bits=""']];
        yield 'no context takeover with a value' => [['permessage-deflate; server_no_context_takeover=1']];
        yield 'client no context takeover with a value' => [['permessage-deflate; client_no_context_takeover=true']];
        yield 'repeated parameter' => [['permessage-deflate; server_no_context_takeover; server_no_context_takeover']];
        yield 'repeated window' => [['permessage-deflate; client_max_window_bits=10; client_max_window_bits=11']];
        yield 'other extensions only' => [['x-webkit-deflate-frame', 'permessage-foo']];
        yield 'header does not parse' => [['permessage-deflate;;']];
        yield 'unterminated quote' => [['permessage-deflate; client_max_window_bits="10']];
        yield 'value on the extension name' => [['permessage-deflate=1']];
        yield 'trailing semicolon' => [['permessage-deflate;']];
        yield 'no offer' => [[]];
    }

    /** @param list<string> $offers */
    #[DataProvider('declined')]
    public function testAnOfferTheServerCannotAcceptIsDeclinedAndTheHandshakeGoesOn(array $offers): void
    {
        $outcome = self::negotiate($offers, new DeflateOptions());
        self::assertTrue($outcome->accepted);
        self::assertArrayNotHasKey('Sec-WebSocket-Extensions', $outcome->headers);
        self::assertNull($outcome->deflate);
    }

    public function testDeflateIsNeverNegotiatedWhenTheServerDidNotEnableIt(): void
    {
        $outcome = self::negotiate(['permessage-deflate'], null);
        self::assertArrayNotHasKey('Sec-WebSocket-Extensions', $outcome->headers);
        self::assertNull($outcome->deflate);
    }

    public function testTheAgreedStateCarriesTheAgreedParameters(): void
    {
        $outcome = self::negotiate(['permessage-deflate; server_no_context_takeover; server_max_window_bits=10; client_max_window_bits=8'], new DeflateOptions(clientNoContextTakeover: true));
        $deflate = $outcome->deflate;
        self::assertNotNull($deflate);
        self::assertTrue($deflate->serverNoContextTakeover);
        self::assertTrue($deflate->clientNoContextTakeover);
        self::assertSame(10, $deflate->serverWindowBits);
        self::assertSame(9, $deflate->clientWindowBits, 'zlib inflates a window of 8 with 9 bits');
    }

    public function testOffersAreParsedWithTheirParameters(): void
    {
        self::assertSame(
            [['a', ['b' => 'x"y', 'c' => true]], ['D', ['e' => '1']], ['f', []]],
            DeflateNegotiation::offers(['a; b="x\"y"; C', 'D;e=1 ,, f']),
        );
        self::assertSame([['a', null]], DeflateNegotiation::offers(['a; b; b=1']), 'a repeated parameter spoils its offer');
        self::assertNull(DeflateNegotiation::offers(['a b']));
    }

    public function testWindowBitsOfEightInTheOptionsAreAProgrammingError(): void
    {
        $this->expectException(\ValueError::class);
        new DeflateOptions(serverMaxWindowBits: 8);
    }

    /** @param list<string> $offers */
    private static function negotiate(array $offers, ?DeflateOptions $deflate): HandshakeOutcome
    {
        $headers = [
            'host' => ['h'],
            'upgrade' => ['websocket'],
            'connection' => ['Upgrade'],
            'sec-websocket-key' => ['dGhlIHNhbXBsZSBub25jZQ=='],
            'sec-websocket-version' => ['13'],
        ];
        if ($offers !== []) {
            $headers['sec-websocket-extensions'] = $offers;
        }
        $head = new RequestHead('GET', '/', '1.1', $headers, '/', '', 'h', RequestHead::BODY_NONE, 0, true, false);
        return Handshake::negotiate(new Request($head, '', null, '127.0.0.1', 1), new HandshakeOptions(deflate: $deflate));
    }
}
