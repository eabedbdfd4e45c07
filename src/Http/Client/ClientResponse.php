<?php

declare(strict_types=1);

namespace Kiln\Http\Client;

use Kiln\Http\Client\Internal\BodyReader;
use Kiln\Http\Client\Internal\ResponseHead;

/**
 * A response whose head has arrived; the body is read on demand, in the Fiber that asks for it.
 * Read it fully (body() or stream() to the end) or call discard(): only then does the connection go
 * back to the pool. A response dropped unread closes its connection.
 */
final class ClientResponse
{
    private string $buffered = '';

    /** @internal Returned by HttpClient::request(). */
    public function __construct(
        private readonly ResponseHead $head,
        private readonly BodyReader $reader,
        private readonly int $maxBodyBytes,
        private readonly string $url,
    ) {}

    public function status(): int
    {
        return $this->head->status;
    }

    public function reason(): string
    {
        return $this->head->reason;
    }

    /** "1.1" or "1.0". */
    public function protocolVersion(): string
    {
        return $this->head->protocol;
    }

    /** The URL that produced this response (after redirects). */
    public function url(): string
    {
        return $this->url;
    }

    public function header(string $name): ?string
    {
        return $this->head->headers[\strtolower($name)][0] ?? null;
    }

    /** @return list<string> every value of a header, in wire order */
    public function headerValues(string $name): array
    {
        return $this->head->headers[\strtolower($name)] ?? [];
    }

    public function hasHeader(string $name): bool
    {
        return isset($this->head->headers[\strtolower($name)]);
    }

    /** @return array<string, list<string>> lower-cased names */
    public function headers(): array
    {
        return $this->head->headers;
    }

    /**
     * Reads the rest of the body into memory (at most ClientOptions::$maxBodyBytes) and returns all of
     * it that stream() has not already yielded. Calling it again returns the same string.
     *
     * @throws ClientException when the body is larger than the limit (the connection is closed)
     */
    public function body(): string
    {
        while (($piece = $this->reader->read()) !== null) {
            $this->buffered .= $piece;
            if (\strlen($this->buffered) > $this->maxBodyBytes) {
                $this->reader->discard();
                $this->buffered = '';
                throw new ClientException("Response body larger than {$this->maxBodyBytes} bytes; use stream()");
            }
        }

        return $this->buffered;
    }

    /**
     * Yields body pieces as they arrive, without buffering them.
     *
     * @return \Generator<int, string>
     */
    public function stream(): \Generator
    {
        while (($piece = $this->reader->read()) !== null) {
            yield $piece;
        }
    }

    /** @return array<string, list<string>> trailer fields of a chunked body, once it has been read */
    public function trailers(): array
    {
        return $this->reader->trailers();
    }

    public function isComplete(): bool
    {
        return $this->reader->isDone();
    }

    /** Gives up an unread body: its connection is closed rather than drained. */
    public function discard(): void
    {
        $this->reader->discard();
    }
}
