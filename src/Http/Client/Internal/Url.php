<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

/**
 * An absolute http(s) URL split into what a connection and a request line need.
 *
 * @internal
 */
final class Url
{
    private function __construct(
        public readonly string $scheme,
        /** Host as written in a URL (IPv6 in brackets). */
        public readonly string $host,
        public readonly int $port,
        /** Origin-form request target: path and query. */
        public readonly string $target,
    ) {}

    /** @throws \ValueError when $url is not an absolute http(s) URL without credentials */
    public static function parse(string $url): self
    {
        $parts = \parse_url($url);
        if ($parts === false || !isset($parts['scheme'], $parts['host']) || $parts['host'] === '') {
            throw new \ValueError("Not an absolute URL: \"{$url}\"");
        }
        $scheme = \strtolower($parts['scheme']);
        if ($scheme !== 'http' && $scheme !== 'https') {
            throw new \ValueError("Unsupported URL scheme \"{$scheme}\": only http and https");
        }
        if (isset($parts['user']) || isset($parts['pass'])) {
            throw new \ValueError('Credentials in the URL are not supported: send an Authorization header');
        }
        if (\preg_match('/[\x00-\x20\x7F]/', $url) === 1) {
            throw new \ValueError('The URL contains whitespace or control characters');
        }
        $target = ($parts['path'] ?? '') === '' ? '/' : $parts['path'];
        if (isset($parts['query'])) {
            $target .= '?' . $parts['query'];
        }

        return new self($scheme, \strtolower($parts['host']), $parts['port'] ?? ($scheme === 'https' ? 443 : 80), $target);
    }

    /** Resolves a Location value against this URL (RFC 3986 §5.2, without dot-segment removal). */
    public function resolve(string $reference): self
    {
        if (\preg_match('/^[a-zA-Z][a-zA-Z0-9+.-]*:/', $reference) === 1) {
            return self::parse($reference);
        }
        if (\str_starts_with($reference, '//')) {
            return self::parse($this->scheme . ':' . $reference);
        }
        $reference = \explode('#', $reference, 2)[0];
        $origin = $this->scheme . '://' . $this->authority();
        if (\str_starts_with($reference, '/')) {
            return self::parse($origin . $reference);
        }
        $path = \explode('?', $this->target, 2)[0];
        if ($reference === '') {
            return self::parse($origin . $this->target);
        }
        if (\str_starts_with($reference, '?')) {
            return self::parse($origin . $path . $reference);
        }

        return self::parse($origin . \substr($path, 0, (int) \strrpos($path, '/') + 1) . $reference);
    }

    /** Host header value: host, plus the port when it is not the scheme's default. */
    public function authority(): string
    {
        $default = $this->scheme === 'https' ? 443 : 80;

        return $this->port === $default ? $this->host : $this->host . ':' . $this->port;
    }

    /** Pool key: connections are shared only between identical origins. */
    public function origin(): string
    {
        return $this->scheme . '://' . $this->host . ':' . $this->port;
    }

    /** Host without IPv6 brackets, for TLS peer name. */
    public function bareHost(): string
    {
        return \trim($this->host, '[]');
    }

    public function toString(): string
    {
        return $this->scheme . '://' . $this->authority() . $this->target;
    }
}
