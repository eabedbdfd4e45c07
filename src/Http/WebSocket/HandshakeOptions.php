<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/** What the server accepts in a WebSocket opening handshake. */
final class HandshakeOptions
{
    /** @var array<string, true> origins as origin() gives them */
    public readonly array $origins;

    /**
     * @param list<string> $allowedOrigins origins a browser may connect from, as it sends them
     *        ("https://example.com", "http://localhost:8080"); empty allows any. A request without an Origin
     *        header is not from a browser page (browsers always send it), so the list does not apply to it.
     * @param list<string> $subprotocols subprotocols the server speaks, in its order of preference: the first
     *        one the client also offers is selected; when none is in common the connection goes on without one
     * @param DeflateOptions|null $deflate permessage-deflate settings, null to never negotiate it (it is
     *        never negotiated without ext-zlib either, whatever this says)
     */
    public function __construct(
        public readonly array $allowedOrigins = [],
        public readonly array $subprotocols = [],
        public readonly ?DeflateOptions $deflate = null,
    ) {
        $origins = [];
        foreach ($allowedOrigins as $origin) {
            $origins[self::origin($origin)] = true;
        }
        $this->origins = $origins;
        foreach ($subprotocols as $subprotocol) {
            if (preg_match('/^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$/D', $subprotocol) !== 1) {
                throw new \ValueError("A subprotocol must be an HTTP token, '$subprotocol' is not");
            }
        }
    }

    /**
     * An origin as compared: lower-cased, without a trailing slash or the scheme's default port, so the
     * `https://example.com:443` of a configuration and the `https://example.com` a browser sends are the same.
     */
    public static function origin(string $origin): string
    {
        $origin = rtrim(strtolower(trim($origin)), '/');
        $default = ['http' => ':80', 'ws' => ':80', 'https' => ':443', 'wss' => ':443'][strstr($origin, '://', true) ?: ''] ?? null;

        return $default !== null && str_ends_with($origin, $default) ? substr($origin, 0, -\strlen($default)) : $origin;
    }
}
