<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

use Kiln\Http\Client\ClientException;

/**
 * Sans-I/O HTTP/1.x response parser for one connection: feed() bytes as they arrive, close() at EOF,
 * and pull events with next() until it returns null (needs more bytes).
 *
 * Per response, next() yields one ResponseHead (1xx interim responses are skipped), then zero or more
 * non-empty body strings, then one ResponseEnd. Any framing or syntax error throws ClientException and
 * leaves the parser Failed: the connection must be closed.
 *
 * @internal
 */
final class ResponseParser
{
    private const MAX_CHUNK_LINE = 4096;

    private ParserState $state = ParserState::Idle;
    private string $buffer = '';
    private bool $eof = false;
    private string $method = 'GET';
    private int $remaining = 0;
    private bool $keepAlive = false;
    /** Bytes of the buffer already checked for a bare LF while looking for the end of the head. */
    private int $scanned = 0;

    public function __construct(
        private readonly int $maxHeaderBytes = 65536,
        private readonly int $maxHeaderCount = 100,
    ) {}

    /** Expects the response to a request with $method. Only legal before the first or after an end. */
    public function begin(string $method): void
    {
        if ($this->state !== ParserState::Idle && $this->state !== ParserState::Done) {
            throw new \Error('ResponseParser::begin() called before the previous response ended');
        }
        $this->method = \strtoupper($method);
        $this->state = ParserState::Head;
        $this->scanned = 0;
    }

    public function feed(string $bytes): void
    {
        $this->buffer .= $bytes;
    }

    /** The peer closed its side: no more bytes will come. */
    public function close(): void
    {
        $this->eof = true;
    }

    /** Bytes received but not yet consumed by a response. */
    public function buffered(): int
    {
        return \strlen($this->buffer);
    }

    public function next(): ResponseHead|string|ResponseEnd|null
    {
        try {
            return match ($this->state) {
                ParserState::Head => $this->head(),
                ParserState::FixedBody => $this->fixedBody(),
                ParserState::ChunkSize => $this->chunkSize(),
                ParserState::ChunkData => $this->chunkData(),
                ParserState::ChunkDataEnd => $this->chunkDataEnd(),
                ParserState::Trailers => $this->trailers(),
                ParserState::CloseDelimited => $this->closeDelimited(),
                ParserState::Idle, ParserState::Done => null,
                ParserState::Failed => throw new \Error('The parser failed earlier; close the connection'),
            };
        } catch (ClientException $e) {
            $this->state = ParserState::Failed;
            throw $e;
        }
    }

    private function head(): ?ResponseHead
    {
        while (true) {
            $end = \strpos($this->buffer, "\r\n\r\n");
            $this->rejectBareLf($end === false ? \strlen($this->buffer) : $end + 4);
            if ($end === false || $end + 4 > $this->maxHeaderBytes) {
                if (\strlen($this->buffer) >= $this->maxHeaderBytes) {
                    throw new ClientException("Response head larger than {$this->maxHeaderBytes} bytes");
                }
                $this->needMore('the response head');

                return null;
            }
            $lines = \explode("\r\n", \substr($this->buffer, 0, $end));
            $this->buffer = (string) \substr($this->buffer, $end + 4);
            $this->scanned = 0;
            [$protocol, $status, $reason] = HeadSyntax::statusLine(\array_shift($lines));
            $headers = HeadSyntax::fields($lines, $this->maxHeaderCount);
            if ($status === 101) {
                throw new ClientException('Unexpected 101 Switching Protocols: upgrades are not supported');
            }
            if ($status >= 200) {
                $this->frame($protocol, $status, $headers);

                return new ResponseHead($protocol, $status, $reason, $headers);
            }
            // 1xx interim response (100 Continue, 103 Early Hints...): skip it, the final one follows.
        }
    }

    /** @param array<string, list<string>> $headers */
    private function frame(string $protocol, int $status, array $headers): void
    {
        $connection = HeadSyntax::tokens($headers['connection'] ?? []);
        $this->keepAlive = $protocol === '1.0'
            ? \in_array('keep-alive', $connection, true)
            : !\in_array('close', $connection, true);
        $this->state = ParserState::FixedBody;
        $this->remaining = 0;
        if ($this->method === 'HEAD' || $status === 204 || $status === 304) {
            return;
        }
        if (isset($headers['transfer-encoding'])) {
            if (isset($headers['content-length'])) {
                throw new ClientException('Both Transfer-Encoding and Content-Length in a response');
            }
            if ($protocol === '1.0') {
                throw new ClientException('Transfer-Encoding in an HTTP/1.0 response');
            }
            if (HeadSyntax::tokens($headers['transfer-encoding']) !== ['chunked']) {
                throw new ClientException('Unsupported Transfer-Encoding: ' . \implode(', ', $headers['transfer-encoding']));
            }
            $this->state = ParserState::ChunkSize;

            return;
        }
        if (isset($headers['content-length'])) {
            $this->remaining = HeadSyntax::contentLength($headers['content-length']);

            return;
        }
        $this->state = ParserState::CloseDelimited;
        $this->keepAlive = false;
    }

    private function fixedBody(): string|ResponseEnd|null
    {
        if ($this->remaining === 0) {
            return $this->end([]);
        }

        return $this->take($this->remaining, 'the body');
    }

    private function chunkData(): ?string
    {
        return $this->take($this->remaining, 'a chunk');
    }

    /** Up to $max buffered body bytes; moves on when the part is complete. */
    private function take(int $max, string $what): ?string
    {
        if ($this->buffer === '') {
            $this->needMore($what);

            return null;
        }
        $piece = \substr($this->buffer, 0, $max);
        $this->buffer = (string) \substr($this->buffer, \strlen($piece));
        $this->remaining -= \strlen($piece);
        if ($this->remaining === 0 && $this->state === ParserState::ChunkData) {
            $this->state = ParserState::ChunkDataEnd;
        }

        return $piece;
    }

    private function chunkSize(): ResponseHead|string|ResponseEnd|null
    {
        $end = \strpos($this->buffer, "\n");
        if ($end !== false && ($end === 0 || $this->buffer[$end - 1] !== "\r")) {
            throw new ClientException('Bare LF in a chunk size line');
        }
        $end = $end === false ? false : $end - 1;
        if ($end === false || $end > self::MAX_CHUNK_LINE) {
            if (\strlen($this->buffer) > self::MAX_CHUNK_LINE) {
                throw new ClientException('Chunk size line too long');
            }
            $this->needMore('a chunk size');

            return null;
        }
        $line = \substr($this->buffer, 0, $end);
        if (\preg_match('/^([0-9A-Fa-f]{1,15})[ \t]*(?:;[^\x00-\x08\x0A-\x1F\x7F]*)?$/D', $line, $m) !== 1) {
            throw new ClientException('Malformed chunk size line: ' . HeadSyntax::quote($line));
        }
        $this->buffer = (string) \substr($this->buffer, $end + 2);
        $this->remaining = (int) \hexdec($m[1]);
        $this->state = $this->remaining === 0 ? ParserState::Trailers : ParserState::ChunkData;

        return $this->next();
    }

    private function chunkDataEnd(): ResponseHead|string|ResponseEnd|null
    {
        if (\strlen($this->buffer) < 2) {
            if ($this->buffer !== '' && $this->buffer !== "\r") {
                throw new ClientException('Chunk data not followed by CRLF');
            }
            $this->needMore('the end of a chunk');

            return null;
        }
        if (!\str_starts_with($this->buffer, "\r\n")) {
            throw new ClientException('Chunk data not followed by CRLF');
        }
        $this->buffer = (string) \substr($this->buffer, 2);
        $this->state = ParserState::ChunkSize;

        return $this->next();
    }

    private function trailers(): ?ResponseEnd
    {
        if (\str_starts_with($this->buffer, "\r\n")) {
            $this->buffer = (string) \substr($this->buffer, 2);

            return $this->end([]);
        }
        $end = \strpos($this->buffer, "\r\n\r\n");
        $this->rejectBareLf($end === false ? \strlen($this->buffer) : $end + 4);
        if ($end === false) {
            if (\strlen($this->buffer) >= $this->maxHeaderBytes) {
                throw new ClientException("Trailer section larger than {$this->maxHeaderBytes} bytes");
            }
            $this->needMore('the trailer section');

            return null;
        }
        $trailers = HeadSyntax::fields(\explode("\r\n", \substr($this->buffer, 0, $end)), $this->maxHeaderCount);
        $this->buffer = (string) \substr($this->buffer, $end + 4);

        return $this->end($trailers);
    }

    private function closeDelimited(): string|ResponseEnd|null
    {
        if ($this->buffer !== '') {
            [$piece, $this->buffer] = [$this->buffer, ''];

            return $piece;
        }

        return $this->eof ? $this->end([]) : null;
    }

    /** @param array<string, list<string>> $trailers */
    private function end(array $trailers): ResponseEnd
    {
        $this->state = ParserState::Done;
        $this->scanned = 0;

        return new ResponseEnd($trailers, $this->keepAlive && !$this->eof);
    }

    private function needMore(string $what): void
    {
        if ($this->eof) {
            throw new ClientException("The server closed the connection before the end of {$what}");
        }
    }

    /** Header and trailer lines must end in CRLF; a bare LF is a framing ambiguity, so reject it. */
    private function rejectBareLf(int $until): void
    {
        $until = \min($until, $this->maxHeaderBytes);
        for ($lf = \strpos($this->buffer, "\n", $this->scanned); $lf !== false && $lf < $until; $lf = \strpos($this->buffer, "\n", $lf + 1)) {
            if ($lf === 0 || $this->buffer[$lf - 1] !== "\r") {
                throw new ClientException('Bare LF in a header section (lines must end in CRLF)');
            }
        }
        $this->scanned = \max($this->scanned, $until);
    }
}
