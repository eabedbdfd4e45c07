<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/**
 * The permessage-deflate state of one connection (RFC 7692), server side: compresses what the server sends
 * and inflates what the client sends, with the parameters the handshake agreed. Made by Handshake::negotiate().
 *
 * The zlib contexts are made on first use, so an idle connection holds none. With context takeover the
 * compressor keeps its window between messages (better ratio); with server_no_context_takeover each message
 * ends in a full flush, which empties the window, so no message refers to an earlier one.
 */
final class PerMessageDeflate
{
    /** Every compressed message ends in an empty stored block; the wire form leaves it out (RFC 7692 §7.2.1). */
    private const TAIL = "\x00\x00\xff\xff";

    /** Deflate's largest expansion is about 1032 to 1: input slices are sized so one cannot overshoot much. */
    private const MAX_RATIO = 1032;

    private const MIN_SLICE = 256;

    private ?\DeflateContext $deflater = null;

    private ?\InflateContext $inflater = null;

    public function __construct(
        public readonly bool $serverNoContextTakeover = false,
        public readonly bool $clientNoContextTakeover = false,
        /** window the server compresses with */
        public readonly int $serverWindowBits = 15,
        /** window the client may compress with (the server inflates with it) */
        public readonly int $clientWindowBits = 15,
        private readonly int $compressionLevel = 6,
        private readonly int $memoryLevel = 8,
    ) {
        if (!DeflateOptions::available()) {
            throw new \Error('permessage-deflate needs ext-zlib');
        }
        foreach ([$serverWindowBits, $clientWindowBits] as $bits) {
            if ($bits < 9 || $bits > 15) {
                throw new \ValueError("window bits must be 9 to 15, $bits given");
            }
        }
    }

    /** The payload of one compressed message (to send with RSV1 set). */
    public function compress(string $message): string
    {
        $this->deflater ??= $this->newDeflater();
        $out = deflate_add($this->deflater, $message, $this->serverNoContextTakeover ? \ZLIB_FULL_FLUSH : \ZLIB_SYNC_FLUSH);
        if ($out === false) {
            throw new \Error('zlib refused to compress'); // only on a broken context, never on data
        }
        if ($out === '') {
            // zlib wrote nothing for an empty message: send a lone empty-block header (RFC 7692 §7.2.3.6), as
            // the tail the client appends must follow one.
            return "\x00";
        }
        return str_ends_with($out, self::TAIL) ? substr($out, 0, -4) : $out;
    }

    /**
     * The message from the payload of one compressed message (its fragments joined).
     *
     * @throws InflateException corrupt data, or more than $limit bytes once inflated (checked slice by slice,
     *         so the output never grows much past $limit)
     */
    public function decompress(string $payload, int $limit): string
    {
        if ($payload === '') {
            return ''; // no bits at all: appending the tail would not make a block, and the message is empty
        }
        $this->inflater ??= $this->newInflater();
        $payload .= self::TAIL;
        $length = \strlen($payload);
        $out = '';
        for ($offset = 0; $offset < $length; $offset += $slice) {
            $slice = max(self::MIN_SLICE, intdiv($limit - \strlen($out), self::MAX_RATIO) + 1);
            $part = @inflate_add($this->inflater, $offset === 0 && $slice >= $length ? $payload : substr($payload, $offset, $slice), \ZLIB_SYNC_FLUSH);
            if ($part === false) {
                $this->inflater = null;
                throw new InflateException('corrupt compressed data', ProtocolViolation::INVALID_DATA);
            }
            $out .= $part;
            if (\strlen($out) > $limit) {
                $this->inflater = null;
                throw new InflateException("message over $limit bytes once inflated", ProtocolViolation::TOO_BIG);
            }
            if (inflate_get_status($this->inflater) === \ZLIB_STREAM_END) {
                // The client ended its deflate stream (BFINAL): the next message starts a new one.
                $this->inflater = null;
                break;
            }
        }
        if ($this->clientNoContextTakeover) {
            $this->inflater = null; // nothing to keep: free the window until the next message
        }
        return $out;
    }

    private function newDeflater(): \DeflateContext
    {
        $context = deflate_init(\ZLIB_ENCODING_RAW, [
            'level' => $this->compressionLevel,
            'memory' => $this->memoryLevel,
            'window' => $this->serverWindowBits,
        ]);
        if ($context === false) {
            throw new \Error('zlib could not make a compressor');
        }
        return $context;
    }

    private function newInflater(): \InflateContext
    {
        $context = inflate_init(\ZLIB_ENCODING_RAW, ['window' => $this->clientWindowBits]);
        if ($context === false) {
            throw new \Error('zlib could not make a decompressor');
        }
        return $context;
    }
}
