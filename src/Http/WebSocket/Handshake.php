<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

use Kiln\Http\Request;
use Kiln\Http\WebSocket\Internal\DeflateNegotiation;

/** The server side of the WebSocket opening handshake (RFC 6455 §4.2), as a pure function of the request. */
final class Handshake
{
    private const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

    /** The Sec-WebSocket-Accept value for a Sec-WebSocket-Key. */
    public static function acceptKey(string $key): string
    {
        return base64_encode(sha1($key . self::GUID, true));
    }

    /** Decides whether to upgrade $request, and how. Never throws on what the client sent. */
    public static function negotiate(Request $request, HandshakeOptions $options): HandshakeOutcome
    {
        if ($request->method() !== 'GET') {
            return HandshakeOutcome::refused(400, 'A WebSocket handshake must be a GET request');
        }
        if ($request->protocolVersion() !== '1.1') {
            return HandshakeOutcome::refused(400, 'A WebSocket handshake needs HTTP/1.1');
        }
        if (!self::hasToken($request->headerValues('upgrade'), 'websocket')) {
            return HandshakeOutcome::refused(400, 'A WebSocket handshake needs "Upgrade: websocket"');
        }
        if (!self::hasToken($request->headerValues('connection'), 'upgrade')) {
            return HandshakeOutcome::refused(400, 'A WebSocket handshake needs "Connection: Upgrade"');
        }
        if ($request->headerValues('sec-websocket-version') !== ['13']) {
            return HandshakeOutcome::refused(426, 'Only WebSocket version 13 is supported', ['Sec-WebSocket-Version' => '13']);
        }
        $keys = $request->headerValues('sec-websocket-key');
        // 16 bytes in base64 are 21 characters, one whose last 4 bits are padding (A, Q, g or w), and "==".
        if (\count($keys) !== 1 || preg_match('~^[A-Za-z0-9+/]{21}[AQgw]==$~D', $keys[0]) !== 1) {
            return HandshakeOutcome::refused(400, 'Sec-WebSocket-Key must be the base64 form of 16 bytes');
        }
        $origin = $request->headerValues('origin');
        if ($options->origins !== [] && $origin !== [] && (\count($origin) !== 1 || !isset($options->origins[HandshakeOptions::origin($origin[0])]))) {
            return HandshakeOutcome::refused(403, 'Origin ' . implode(', ', $origin) . ' is not allowed');
        }
        $headers = [
            'Upgrade' => 'websocket',
            'Connection' => 'Upgrade',
            'Sec-WebSocket-Accept' => self::acceptKey($keys[0]),
        ];
        $subprotocol = self::subprotocol($request->headerValues('sec-websocket-protocol'), $options->subprotocols);
        if ($subprotocol !== null) {
            $headers['Sec-WebSocket-Protocol'] = $subprotocol;
        }
        $deflate = null;
        if ($options->deflate !== null && DeflateOptions::available()) {
            $agreed = DeflateNegotiation::negotiate($request->headerValues('sec-websocket-extensions'), $options->deflate);
            if ($agreed !== null) {
                [$deflate, $headers['Sec-WebSocket-Extensions']] = $agreed;
            }
        }
        return HandshakeOutcome::accepted($headers, $subprotocol, $deflate);
    }

    /** @param list<string> $values comma-separated lists of tokens */
    private static function hasToken(array $values, string $token): bool
    {
        foreach ($values as $value) {
            foreach (explode(',', $value) as $item) {
                if (strcasecmp(trim($item, " \t"), $token) === 0) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * @param list<string> $offered the client's Sec-WebSocket-Protocol fields
     * @param list<string> $supported the server's, in its order of preference
     */
    private static function subprotocol(array $offered, array $supported): ?string
    {
        if ($offered === [] || $supported === []) {
            return null;
        }
        $offers = [];
        foreach ($offered as $value) {
            foreach (explode(',', $value) as $item) {
                $offers[trim($item, " \t")] = true;
            }
        }
        foreach ($supported as $subprotocol) {
            if (isset($offers[$subprotocol])) {
                return $subprotocol;
            }
        }
        return null;
    }
}
