<?php

declare(strict_types=1);

namespace Kiln\Http;

/**
 * An HTTP response. The body is a string (sent with Content-Length), an iterable of strings (streamed
 * with chunked encoding as it is produced, with backpressure), or a readable stream resource (sent in
 * pieces; with Content-Length when its size is known).
 */
final class Response
{
    /** @var array<string, list<string>> keyed by lower-cased name */
    private array $headers = [];

    /** @var array<string, string> lower-cased name => name as written */
    private array $names = [];

    /** @var \Closure(resource, string): void|null */
    private ?\Closure $upgrade = null;

    private ?\Throwable $failure = null;

    /**
     * @param array<string, string|list<string>> $headers
     * @param string|iterable<string>|resource $body
     */
    public function __construct(
        private int $status = 200,
        array $headers = [],
        private mixed $body = '',
    ) {
        foreach ($headers as $name => $value) {
            $this->setHeader($name, $value);
        }
    }

    public static function html(string $html, int $status = 200): self
    {
        return new self($status, ['Content-Type' => 'text/html; charset=utf-8'], $html);
    }

    public static function text(string $text, int $status = 200): self
    {
        return new self($status, ['Content-Type' => 'text/plain; charset=utf-8'], $text);
    }

    public static function json(mixed $data, int $status = 200): self
    {
        $json = json_encode($data, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
        return new self($status, ['Content-Type' => 'application/json'], $json);
    }

    public static function redirect(string $location, int $status = 302): self
    {
        return new self($status, ['Location' => $location], '');
    }

    public function status(): int
    {
        return $this->status;
    }

    public function setStatus(int $status): void
    {
        if ($status < 100 || $status > 999) {
            throw new \ValueError("HTTP status must be 100-999, got $status");
        }
        $this->status = $status;
    }

    /** @param string|list<string> $value */
    public function setHeader(string $name, string|array $value): void
    {
        $lower = strtolower($name);
        $this->names[$lower] = $name;
        $this->headers[$lower] = is_array($value) ? array_values($value) : [$value];
    }

    public function addHeader(string $name, string $value): void
    {
        $lower = strtolower($name);
        $this->names[$lower] ??= $name;
        $this->headers[$lower][] = $value;
    }

    public function removeHeader(string $name): void
    {
        $lower = strtolower($name);
        unset($this->headers[$lower], $this->names[$lower]);
    }

    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)][0] ?? null;
    }

    public function hasHeader(string $name): bool
    {
        return isset($this->headers[strtolower($name)]);
    }

    /** @return array<string, list<string>> names as written */
    public function headers(): array
    {
        $out = [];
        foreach ($this->headers as $lower => $values) {
            $out[$this->names[$lower]] = $values;
        }
        return $out;
    }

    /**
     * Headers to put on the wire: as headers(), less the framing fields the server owns.
     *
     * @return array<string, list<string>>
     */
    public function wireHeaders(): array
    {
        $out = [];
        foreach ($this->headers as $lower => $values) {
            if ($lower !== 'content-length' && $lower !== 'transfer-encoding') {
                $out[$this->names[$lower]] = $values;
            }
        }
        return $out;
    }

    /** @return string|iterable<string>|resource */
    public function body(): mixed
    {
        return $this->body;
    }

    /** @param string|iterable<string>|resource $body */
    public function setBody(mixed $body): void
    {
        $this->body = $body;
    }

    /**
     * Marks this response as the rendering of a failure the operator should see (an uncaught exception
     * turned into a 500 page, say): the server writes it to the error log with the request line.
     */
    public function reportFailure(\Throwable $failure): void
    {
        $this->failure = $failure;
    }

    public function failure(): ?\Throwable
    {
        return $this->failure;
    }

    /**
     * Switch protocols after this (101) response: the callback receives the client socket and any bytes
     * the client already sent past the request. The HTTP connection lets go of the socket.
     *
     * @param \Closure(resource, string): void $takeOver
     */
    public function setUpgrade(\Closure $takeOver): void
    {
        $this->upgrade = $takeOver;
    }

    /** @return \Closure(resource, string): void|null */
    public function upgrade(): ?\Closure
    {
        return $this->upgrade;
    }
}
