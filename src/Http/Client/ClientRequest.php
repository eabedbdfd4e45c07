<?php

declare(strict_types=1);

namespace Kiln\Http\Client;

use Kiln\Http\Client\Internal\RequestWriter;
use Kiln\Http\Client\Internal\Url;

/**
 * An outgoing request. A string body is sent with Content-Length; an iterable body is streamed with
 * chunked transfer coding as the iterable yields (and cannot be resent on a redirect or retry).
 */
final class ClientRequest
{
    private readonly string $method;
    private readonly Url $url;
    /** @var array<string, list<string>> */
    private readonly array $headers;

    /**
     * @param array<string, string|list<string>> $headers
     * @param string|iterable<string> $body
     */
    public function __construct(
        string $method,
        string $url,
        array $headers = [],
        private readonly string|iterable $body = '',
        /** Total seconds for this request instead of ClientOptions::$timeout. */
        private readonly ?float $timeout = null,
    ) {
        if (\preg_match('/^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$/D', $method) !== 1) {
            throw new \ValueError("Invalid HTTP method \"{$method}\"");
        }
        if (\strtoupper($method) === 'CONNECT') {
            throw new \ValueError('CONNECT (tunnels, proxies) is not supported');
        }
        if ($timeout !== null && !($timeout > 0)) {
            throw new \ValueError('The request timeout must be positive');
        }
        $this->method = $method;
        $this->url = Url::parse($url);
        $normalized = [];
        foreach ($headers as $name => $values) {
            $values = \is_array($values) ? \array_values($values) : [$values];
            foreach ($values as $value) {
                RequestWriter::assertHeader((string) $name, $value);
            }
            $normalized[(string) $name] = $values;
        }
        $this->headers = $normalized;
    }

    public function method(): string
    {
        return $this->method;
    }

    public function url(): string
    {
        return $this->url->toString();
    }

    /** @return array<string, list<string>> names as given */
    public function headers(): array
    {
        return $this->headers;
    }

    /** @return string|iterable<string> */
    public function body(): string|iterable
    {
        return $this->body;
    }

    public function timeout(): ?float
    {
        return $this->timeout;
    }

    /** Safe to send twice (RFC 9110 §9.2.2) and replayable (string body). */
    public function isRetryable(): bool
    {
        return \is_string($this->body) && \in_array(\strtoupper($this->method), ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'], true);
    }

    /** @internal */
    public function parsedUrl(): Url
    {
        return $this->url;
    }
}
