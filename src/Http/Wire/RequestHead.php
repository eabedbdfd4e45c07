<?php

declare(strict_types=1);

namespace Kiln\Http\Wire;

/**
 * A parsed request line and header block, validated. Produced by RequestParser.
 *
 * Header names are lower-cased; each maps to its values in arrival order (a field repeated on the wire
 * gives several values; a comma-separated list in one field stays one value).
 */
final class RequestHead
{
    public const BODY_NONE = 0;
    public const BODY_LENGTH = 1;
    public const BODY_CHUNKED = 2;

    /**
     * @param array<string, list<string>> $headers
     */
    public function __construct(
        public readonly string $method,
        /** Request target as sent: origin-form "/a?b", absolute-form "http://h/a", or "*". */
        public readonly string $target,
        /** "1.0" or "1.1" */
        public readonly string $version,
        public readonly array $headers,
        /** Path part of the target (for absolute-form, the path of the URI; "*" for asterisk-form). */
        public readonly string $path,
        /** Query string without "?", "" when absent. */
        public readonly string $query,
        /** Host from the Host header (or the absolute-form authority), lower-cased, without port. */
        public readonly string $host,
        public readonly int $bodyKind,
        /** Declared length for BODY_LENGTH, else -1 (unknown: chunked) or 0 (none). */
        public readonly int $contentLength,
        /** Whether the connection may stay open after this exchange (HTTP/1.1 default, 1.0 keep-alive). */
        public readonly bool $keepAlive,
        public readonly bool $expectContinue,
    ) {}

    public function header(string $lowerName): ?string
    {
        return $this->headers[$lowerName][0] ?? null;
    }

    public function hasBody(): bool
    {
        return $this->bodyKind !== self::BODY_NONE;
    }
}
