<?php

declare(strict_types=1);

namespace Kiln\Http\Wire\Internal;

use Kiln\Http\Limits;
use Kiln\Http\Wire\BodyChunk;
use Kiln\Http\Wire\MessageEnd;
use Kiln\Http\Wire\ParseException;

/**
 * Resumable decoder for the chunked transfer coding (RFC 9112 §7.1), reading the parser's buffer in place.
 *
 * chunk-size is 1*16HEXDIG, nothing else (no "0x", sign or leading whitespace); extensions are checked
 * for syntax, bounded by the chunk line limit and ignored; data must be followed by exactly CRLF; trailers
 * are parsed like header fields under the same limits, and fields that must not be trailers are dropped.
 *
 * @internal
 */
final class ChunkedDecoder
{
    /** Longest chunk-size line (size + extensions), CRLF excluded. */
    public const MAX_LINE = 4096;

    private const SIZE_LINE = '/^([0-9A-Fa-f]{1,16})(?:[ \t]*+;[ \t]*+[!#$%&\'*+\-.^_`|~0-9A-Za-z]++'
        . '(?:[ \t]*+=[ \t]*+(?:[!#$%&\'*+\-.^_`|~0-9A-Za-z]++|"(?:[\t \x21\x23-\x5B\x5D-\x7E\x80-\xFF]|\\\\[\t \x21-\x7E\x80-\xFF])*+"))?+)*+\z/';

    /** Fields a sender must not put in a trailer (framing, routing, authentication, content handling). */
    private const NOT_TRAILERS = [
        'transfer-encoding' => true, 'content-length' => true, 'host' => true, 'connection' => true,
        'keep-alive' => true, 'te' => true, 'trailer' => true, 'upgrade' => true, 'expect' => true,
        'authorization' => true, 'proxy-authorization' => true, 'cookie' => true, 'set-cookie' => true,
        'content-type' => true, 'content-encoding' => true, 'content-range' => true, 'range' => true,
    ];

    private ChunkState $state = ChunkState::Size;

    private int $remaining = 0;

    private int $total = 0;

    private readonly BlockScanner $trailers;

    public function __construct(private readonly Limits $limits)
    {
        $this->trailers = new BlockScanner(\PHP_INT_MAX, 431, $limits->headerBytes, FieldSyntax::FIELD_LINES);
    }

    public function reset(): void
    {
        $this->state = ChunkState::Size;
        $this->remaining = 0;
        $this->total = 0;
        $this->trailers->reset();
    }

    /**
     * Decodes from $buf at $pos, advancing $pos past what it consumed.
     *
     * @return BodyChunk|MessageEnd|null null when more bytes are needed
     * @throws ParseException
     */
    public function decode(string $buf, int &$pos): BodyChunk|MessageEnd|null
    {
        $len = \strlen($buf);
        while (true) {
            switch ($this->state) {
                case ChunkState::Size:
                    $eol = strpos($buf, "\r\n", $pos);
                    if ($eol === false) {
                        self::checkPartialLine($buf, $pos, $len);
                        return null;
                    }
                    $size = $this->chunkSize(substr($buf, $pos, $eol - $pos));
                    $pos = $eol + 2;
                    $this->remaining = $size;
                    $this->state = $size === 0 ? ChunkState::Trailer : ChunkState::Data;
                    break;
                case ChunkState::Data:
                    if ($pos >= $len) {
                        return null;
                    }
                    $take = min($len - $pos, $this->remaining);
                    $data = substr($buf, $pos, $take);
                    $pos += $take;
                    $this->remaining -= $take;
                    if ($this->remaining === 0) {
                        $this->state = ChunkState::DataEnd;
                    }
                    return new BodyChunk($data);
                case ChunkState::DataEnd:
                    if ($len - $pos < 2) {
                        if ($len > $pos && $buf[$pos] !== "\r") {
                            throw new ParseException(400, 'Chunk data not followed by CRLF');
                        }
                        return null;
                    }
                    if ($buf[$pos] !== "\r" || $buf[$pos + 1] !== "\n") {
                        throw new ParseException(400, 'Chunk data not followed by CRLF');
                    }
                    $pos += 2;
                    $this->state = ChunkState::Size;
                    break;
                case ChunkState::Trailer:
                    return $this->trailer($buf, $pos, $len);
            }
        }
    }

    /** @throws ParseException */
    private function trailer(string $buf, int &$pos, int $len): ?MessageEnd
    {
        if ($this->trailers->isFresh() && $pos < $len && $buf[$pos] === "\r") {
            if ($len - $pos < 2) {
                return null;
            }
            if ($buf[$pos + 1] === "\n") {
                $pos += 2;
                $this->reset();
                return new MessageEnd();
            }
        }
        $block = $this->trailers->scan($buf, $pos);
        if ($block === null) {
            return null;
        }
        $fields = FieldSyntax::parseFields(\explode("\r\n", $block), 0, $this->limits, $this->trailers->wellFormed);
        $pos += \strlen($block) + 4;
        $this->reset();
        return new MessageEnd(array_diff_key($fields, self::NOT_TRAILERS));
    }

    /** @throws ParseException */
    private function chunkSize(string $line): int
    {
        if (\strlen($line) > self::MAX_LINE || preg_match(self::SIZE_LINE, $line, $m) !== 1) {
            throw new ParseException(400, 'Invalid chunk size line');
        }
        $size = hexdec($m[1]);
        if (!\is_int($size)) {
            throw new ParseException(400, 'Chunk size overflows');
        }
        $this->total += $size;
        if ($this->total > $this->limits->bodySize) {
            throw new ParseException(413, "Request body larger than {$this->limits->bodySize} bytes");
        }
        return $size;
    }

    /**
     * A chunk-size line still incomplete: reject it as soon as it cannot become valid (always 400, so the
     * verdict does not depend on how the bytes were split).
     *
     * @throws ParseException
     */
    private static function checkPartialLine(string $buf, int $pos, int $len): void
    {
        $cr = \strpos($buf, "\r", $pos);
        if ($len - $pos > self::MAX_LINE + 1
            || \preg_match('/[\x00-\x08\x0A-\x0C\x0E-\x1F\x7F]/', $buf, $m, 0, $pos) === 1
            || ($cr !== false && $cr < $len - 1)
        ) {
            throw new ParseException(400, 'Invalid chunk size line');
        }
    }
}
