<?php

declare(strict_types=1);

namespace Kiln\Http\Wire;

use Kiln\Http\Limits;
use Kiln\Http\Wire\Internal\BlockScanner;
use Kiln\Http\Wire\Internal\ChunkedDecoder;
use Kiln\Http\Wire\Internal\FieldSyntax;
use Kiln\Http\Wire\Internal\HeadParser;
use Kiln\Http\Wire\Internal\ParserState;

/**
 * Sans-I/O HTTP/1.1 request parser (RFC 9112): bytes in through feed(), items out through next().
 *
 * Per request next() yields one RequestHead; then, only when the head has a body, zero or more BodyChunk
 * (as soon as body bytes arrive) and one MessageEnd. Then it starts on the next pipelined request.
 * The verdict never depends on how the bytes were split across feed() calls.
 *
 * Decisions: bare LF line endings are rejected (400); up to MAX_EMPTY_LINES empty lines before a request
 * line are skipped; CONNECT gets 501; Expect values other than 100-continue are ignored. After a
 * ParseException the parser is dead: every later next() throws the same error and fed bytes are dropped.
 *
 * A head whose exact bytes were parsed before is taken from the HeadCache instead of being parsed again
 * (only bodiless heads the parser accepted are kept there). Parsers with the same Limits may share one cache.
 */
final class RequestParser
{
    /** Empty lines (CRLF) tolerated before a request line (RFC 9112 §2.2); one more is a 400. */
    public const MAX_EMPTY_LINES = 4;

    /** Consumed bytes are dropped from the buffer once they are this many and at least half of it. */
    private const COMPACT_AT = 16384;

    /** Heads a parser keeps when it is given no cache to share: a keep-alive client repeating itself. */
    private const OWN_CACHE = 4;

    private string $buf = '';

    private int $pos = 0;

    private ParserState $state = ParserState::Head;

    private int $remaining = 0;

    private int $emptyLines = 0;

    private ?ParseException $error = null;

    private readonly BlockScanner $head;

    /** The head scanner stopped inside a head that has not all arrived: reset it before a head is taken otherwise. */
    private bool $scanning = false;

    private readonly ChunkedDecoder $chunked;

    private readonly HeadCache $cache;

    /** @param ?HeadCache $cache shared with other parsers (made for the same Limits), or null for one of its own */
    public function __construct(private readonly Limits $limits, ?HeadCache $cache = null)
    {
        if ($cache !== null && $cache->limits !== $limits) {
            throw new \Error('A HeadCache serves parsers with the Limits it was made for: pass the same Limits object');
        }
        $this->head = new BlockScanner($limits->requestLine, 414, $limits->headerBytes, FieldSyntax::HEAD_LINES);
        $this->chunked = new ChunkedDecoder($limits);
        $this->cache = $cache ?? new HeadCache($limits, self::OWN_CACHE);
    }

    /** Append bytes received from the client. */
    public function feed(string $bytes): void
    {
        if ($this->error !== null || $bytes === '') {
            return;
        }
        if ($this->pos > 0) {
            $length = \strlen($this->buf);
            if ($this->pos === $length) {
                $this->buf = $bytes;
                $this->pos = 0;
                return;
            }
            if ($this->pos >= self::COMPACT_AT && $this->pos * 2 >= $length) {
                $this->buf = substr($this->buf, $this->pos);
                $this->pos = 0;
            }
        }
        $this->buf .= $bytes;
    }

    /**
     * Next parsed item, or null when more bytes are needed.
     *
     * @throws ParseException (status 400/413/414/431/501/505); after an error every call throws the same error
     */
    public function next(): RequestHead|BodyChunk|MessageEnd|null
    {
        if ($this->error !== null) {
            throw $this->error;
        }
        if ($this->state === ParserState::Head && $this->pos === 0) {
            if ($this->buf === '') {
                return null; // between requests with nothing buffered: the usual case after a response
            }
            // The usual request: what was read is exactly one head seen before. A key is a whole head, so nothing
            // else is buffered, and nextHead() would find the same; this spares its scan for the head's end.
            $known = \strlen($this->buf) <= HeadCache::MAX_KEY ? $this->cache->get($this->buf) : null;
            if ($known !== null) {
                $this->buf = '';
                $this->emptyLines = 0;
                if ($this->scanning) { // else the scanner is fresh: a reset would change nothing
                    $this->head->reset();
                    $this->scanning = false;
                }
                return $known;
            }
        }
        try {
            $item = match ($this->state) {
                ParserState::Head => $this->nextHead(),
                ParserState::Length => $this->nextLengthChunk(),
                ParserState::Chunked => $this->nextChunked(),
                ParserState::End => $this->messageEnd(),
            };
        } catch (ParseException $error) {
            $this->error = $error;
            $this->buf = '';
            $this->pos = 0;
            throw $error;
        }
        if ($this->pos > 0 && $this->pos === \strlen($this->buf)) {
            $this->buf = '';
            $this->pos = 0;
        }
        return $item;
    }

    /** Bytes fed but not yet returned as items. */
    public function buffered(): int
    {
        return \strlen($this->buf) - $this->pos;
    }

    /** The first $length bytes fed but not yet returned as items: what a next request begins with. */
    public function peek(int $length): string
    {
        return (string) substr($this->buf, $this->pos, $length);
    }

    /**
     * Hands over the bytes fed but not parsed, and leaves the parser empty: for a protocol switch
     * (101), where what the client sent after the request belongs to the new protocol.
     */
    public function takeBuffer(): string
    {
        $rest = (string) substr($this->buf, $this->pos);
        $this->buf = '';
        $this->pos = 0;
        return $rest;
    }

    /** Whether the parser holds no partial request (between requests, nothing buffered, not failed). */
    public function isIdle(): bool
    {
        return $this->state === ParserState::Head && $this->error === null && $this->pos === \strlen($this->buf);
    }

    /** @throws ParseException */
    private function nextHead(): ?RequestHead
    {
        $buf = $this->buf;
        $length = \strlen($buf);
        while ($this->pos < $length && $buf[$this->pos] === "\r") {
            if ($this->pos + 1 === $length) {
                return null;
            }
            if ($buf[$this->pos + 1] !== "\n") {
                break; // bare CR: the scanner reports it
            }
            if (++$this->emptyLines > self::MAX_EMPTY_LINES) {
                throw new ParseException(400, 'Too many empty lines before the request line');
            }
            $this->pos += 2;
        }
        $pos = $this->pos;
        if ($pos === $length) {
            return null;
        }
        // A head seen before: the same bytes, the same (immutable) result. Looked for when the head starts
        // arriving, and again only while what is buffered could still be a key: a head fed byte by byte is
        // not searched from its start on every byte (the scanner resumes where it stopped).
        if ($buf[$pos] !== "\r" && ($length - $pos <= HeadCache::MAX_KEY || $this->head->isFresh())) {
            $end = \strpos($buf, "\r\n\r\n", $pos);
            if ($end !== false && $end + 4 - $pos <= HeadCache::MAX_KEY) {
                $known = $this->cache->get($pos === 0 && $end + 4 === $length ? $buf : \substr($buf, $pos, $end + 4 - $pos));
                if ($known !== null) {
                    $this->pos = $end + 4;
                    $this->emptyLines = 0;
                    if ($this->scanning) {
                        $this->head->reset();
                        $this->scanning = false;
                    }
                    return $known;
                }
            }
        }
        $block = $this->head->scan($buf, $pos);
        if ($block === null) {
            $this->scanning = true;
            return null;
        }
        $head = HeadParser::parse($block, $this->limits, $this->head->wellFormed);
        $this->pos += \strlen($block) + 4;
        $this->emptyLines = 0;
        $this->head->reset();
        $this->scanning = false;
        if ($head->bodyKind === RequestHead::BODY_NONE) {
            $this->cache->put($block . "\r\n\r\n", $head);
        } elseif ($head->bodyKind === RequestHead::BODY_LENGTH) {
            $this->state = ParserState::Length;
            $this->remaining = $head->contentLength;
        } elseif ($head->bodyKind === RequestHead::BODY_CHUNKED) {
            $this->state = ParserState::Chunked;
            $this->chunked->reset();
        }
        return $head;
    }

    private function nextLengthChunk(): ?BodyChunk
    {
        $available = \strlen($this->buf) - $this->pos;
        if ($available === 0) {
            return null;
        }
        if ($available <= $this->remaining) {
            $data = $this->pos === 0 ? $this->buf : substr($this->buf, $this->pos);
            $this->buf = '';
            $this->pos = 0;
        } else {
            $data = substr($this->buf, $this->pos, $this->remaining);
            $this->pos += $this->remaining;
        }
        $this->remaining -= \strlen($data);
        if ($this->remaining === 0) {
            $this->state = ParserState::End;
        }
        return new BodyChunk($data);
    }

    /** @throws ParseException */
    private function nextChunked(): BodyChunk|MessageEnd|null
    {
        $item = $this->chunked->decode($this->buf, $this->pos);
        if ($item instanceof MessageEnd) {
            $this->state = ParserState::Head;
        }
        return $item;
    }

    private function messageEnd(): MessageEnd
    {
        $this->state = ParserState::Head;
        return new MessageEnd();
    }
}
