<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/**
 * What the server asks for and allows when a client offers permessage-deflate (RFC 7692). Passing these in
 * HandshakeOptions turns the extension on; it is off by default. It needs ext-zlib: without it
 * (DeflateOptions::available() false) the offer is simply never accepted and connections run uncompressed.
 *
 * Memory per connection, once a message has gone each way: the compressor holds about
 * 2^(serverMaxWindowBits + 2) + 2^(memoryLevel + 9) bytes (256 KiB at the defaults 15 and 8; 5 KiB at 9 and
 * 1), the decompressor 2^clientWindowBits plus about 7 KiB. Neither exists until first used. A compressed
 * message is inflated in slices and stops as soon as it grows past WebSocketLimits::$maxMessageBytes, so a
 * decompression bomb costs at most that limit plus about 256 KiB.
 */
final class DeflateOptions
{
    public function __construct(
        /** Compress every message on its own (smaller memory use by the client, worse ratio). */
        public readonly bool $serverNoContextTakeover = false,
        /** Ask the client to compress every message on its own. */
        public readonly bool $clientNoContextTakeover = false,
        /** Largest LZ77 window the server compresses with, 9-15 (zlib cannot make raw streams with 8). */
        public readonly int $serverMaxWindowBits = 15,
        /** Largest window the server asks the client to use, 9-15; only sent when the client offers the parameter. */
        public readonly int $clientMaxWindowBits = 15,
        /** zlib compression level, 1 (fastest) to 9 (smallest). */
        public readonly int $compressionLevel = 6,
        /** zlib memLevel, 1-9: the compressor's hash table size, memory against speed and ratio. */
        public readonly int $memoryLevel = 8,
    ) {
        foreach (['serverMaxWindowBits' => $serverMaxWindowBits, 'clientMaxWindowBits' => $clientMaxWindowBits] as $name => $bits) {
            if ($bits < 9 || $bits > 15) {
                throw new \ValueError("$name must be 9 to 15 (zlib cannot use a raw window of 8), $bits given");
            }
        }
        if ($compressionLevel < 1 || $compressionLevel > 9) {
            throw new \ValueError("compressionLevel must be 1 to 9, $compressionLevel given");
        }
        if ($memoryLevel < 1 || $memoryLevel > 9) {
            throw new \ValueError("memoryLevel must be 1 to 9, $memoryLevel given");
        }
    }

    /** Whether permessage-deflate can be negotiated at all in this PHP (ext-zlib loaded). */
    public static function available(): bool
    {
        return \function_exists('deflate_init');
    }
}
