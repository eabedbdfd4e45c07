<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Http\Wire\RequestHead;

/**
 * One HTTP request as the app sees it. The body is held in memory up to Limits::$bodyMemory and in a
 * temporary file above it; the file is removed when the exchange ends, also when the client goes away.
 */
final class Request
{
    /** @var array<string, string>|null */
    private ?array $queryParams = null;

    /** @var array<string, mixed> */
    private array $attributes = [];

    /**
     * @param resource|null $bodyFile
     */
    public function __construct(
        private readonly RequestHead $head,
        private readonly string $bodyBytes,
        private readonly mixed $bodyFile,
        public readonly string $remoteAddress,
        public readonly int $remotePort,
        public readonly string $localAddress = '',
        public readonly int $localPort = 0,
    ) {}

    public function method(): string
    {
        return $this->head->method;
    }

    /** The request target as sent on the request line. */
    public function target(): string
    {
        return $this->head->target;
    }

    public function path(): string
    {
        return $this->head->path;
    }

    public function queryString(): string
    {
        return $this->head->query;
    }

    /** @return array<string, mixed> */
    public function query(): array
    {
        if ($this->queryParams === null) {
            parse_str($this->head->query, $params);
            /** @var array<string, string> $params */
            $this->queryParams = $params;
        }
        return $this->queryParams;
    }

    public function protocolVersion(): string
    {
        return $this->head->version;
    }

    public function host(): string
    {
        return $this->head->host;
    }

    /** First value of a header, by case-insensitive name. */
    public function header(string $name): ?string
    {
        return $this->head->headers[strtolower($name)][0] ?? null;
    }

    /** @return list<string> every value of a header */
    public function headerValues(string $name): array
    {
        return $this->head->headers[strtolower($name)] ?? [];
    }

    /** @return array<string, list<string>> lower-cased names */
    public function headers(): array
    {
        return $this->head->headers;
    }

    public function bodySize(): int
    {
        if ($this->bodyFile !== null) {
            $stat = fstat($this->bodyFile);
            return $stat === false ? 0 : $stat['size'];
        }
        return strlen($this->bodyBytes);
    }

    /** The whole body as a string (reads the temporary file when the body was spooled). */
    public function body(): string
    {
        if ($this->bodyFile === null) {
            return $this->bodyBytes;
        }
        rewind($this->bodyFile);
        return (string) stream_get_contents($this->bodyFile);
    }

    /**
     * The body as a readable stream, rewound. Owned by the request: do not close it.
     *
     * @return resource
     */
    public function bodyStream(): mixed
    {
        if ($this->bodyFile !== null) {
            rewind($this->bodyFile);
            return $this->bodyFile;
        }
        $stream = fopen('php://memory', 'w+b');
        if ($stream === false) {
            throw new \RuntimeException('Cannot open php://memory');
        }
        fwrite($stream, $this->bodyBytes);
        rewind($stream);
        return $stream;
    }

    public function isBodySpooled(): bool
    {
        return $this->bodyFile !== null;
    }

    public function attribute(string $name, mixed $default = null): mixed
    {
        return $this->attributes[$name] ?? $default;
    }

    public function setAttribute(string $name, mixed $value): void
    {
        $this->attributes[$name] = $value;
    }

    public function head(): RequestHead
    {
        return $this->head;
    }

    /**
     * Closes (and so removes) the spooled body file. Called by the server when the exchange ends.
     *
     * @internal
     */
    public function releaseBody(): void
    {
        if (\is_resource($this->bodyFile)) {
            fclose($this->bodyFile);
        }
    }
}
