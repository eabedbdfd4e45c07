<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Http\Body\FileResponse;
use Kiln\Http\Sse\EventStream;
use Kiln\Http\Wire\Internal\FieldSyntax;

/**
 * An HTTP response. The body is a string (sent with Content-Length), an iterable of strings (streamed
 * with chunked encoding as it is produced, with backpressure), or a readable stream resource (sent in
 * pieces; with Content-Length when its size is known). The server frames the body itself: a Content-Length
 * header set here is not sent as it is, but frames an iterable body and answers a HEAD request (see
 * declaredLength()).
 *
 * Header names must be tokens and values must not hold CR, LF or NUL: setHeader() and addHeader() throw
 * \ValueError at once. Every way in checks, so ResponseEncoder::responseHead() sends them without a second
 * pass: keep it so (a test in ResponseEncoderTest tries each way in).
 */
final class Response
{
    /**
     * Names written on nearly every response, by how they are usually spelled, with their lower-cased
     * form: known tokens, so setting them skips the name's syntax check and strtolower() (the lower-cased
     * forms are there for lookups such as header('content-type')).
     */
    private const COMMON = [
        'Content-Type' => 'content-type', 'content-type' => 'content-type',
        'Cache-Control' => 'cache-control', 'cache-control' => 'cache-control',
        'Location' => 'location', 'location' => 'location',
        'Set-Cookie' => 'set-cookie', 'set-cookie' => 'set-cookie',
        'ETag' => 'etag', 'etag' => 'etag',
        'Vary' => 'vary', 'vary' => 'vary',
        'Allow' => 'allow', 'allow' => 'allow',
        'Last-Modified' => 'last-modified', 'last-modified' => 'last-modified',
        'Content-Encoding' => 'content-encoding', 'content-encoding' => 'content-encoding',
        'Content-Length' => 'content-length', 'content-length' => 'content-length',
        'Retry-After' => 'retry-after', 'retry-after' => 'retry-after',
        'Content-Disposition' => 'content-disposition', 'content-disposition' => 'content-disposition',
        'WWW-Authenticate' => 'www-authenticate', 'www-authenticate' => 'www-authenticate',
        'X-Request-Id' => 'x-request-id', 'x-request-id' => 'x-request-id',
    ];

    /** @var array<string, list<string>> keyed by name as written (the encoder takes this array as it is) */
    private array $headers = [];

    /** @var array<string, string> lower-cased name => name as written (the key in $headers) */
    private array $names = [];

    /** @var \Closure(resource, string): void|null */
    private ?\Closure $upgrade = null;

    private ?\Throwable $failure = null;

    // Declared with a default, not promoted: the constructor's first write to a property that has a value
    // already takes the engine's fast path (a promoted or readonly one starts unset, and is written slowly).
    private int $status = 200;

    /** @var string|iterable<string>|resource|EventStream */
    private mixed $body = '';

    /**
     * @param array<string, string|list<string>> $headers
     * @param string|iterable<string>|resource|EventStream $body
     */
    public function __construct(int $status = 200, array $headers = [], mixed $body = '')
    {
        $this->status = $status;
        $this->body = $body;
        foreach ($headers as $name => $value) {
            // Inlined setHeader() for a common name with a clean string value (nearly every response).
            $lower = self::COMMON[$name] ?? null;
            if ($lower !== null && \is_string($value) && !isset($this->names[$lower])
                && !\str_contains($value, "\r") && !\str_contains($value, "\n") && !\str_contains($value, "\0")) {
                $this->names[$lower] = $name;
                $this->headers[$name] = [$value];
            } else {
                $this->setHeader($name, $value);
            }
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

    /** @param int $flags added to JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE */
    public static function json(mixed $data, int $status = 200, int $flags = 0): self
    {
        $json = \json_encode($data, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | $flags);
        return new self($status, ['Content-Type' => 'application/json'], $json);
    }

    /** @throws \ValueError for a Location with CR, LF or NUL (header injection) */
    public static function redirect(string $location, int $status = 302): self
    {
        return new self($status, ['Location' => $location], '');
    }

    /**
     * Streams a file with its length. With $downloadName, Content-Disposition: attachment names it
     * (ASCII fallback plus filename*=UTF-8''...); the name is a display name, directory parts dropped.
     *
     * @throws HttpException when the file cannot be opened
     */
    public static function file(string $path, ?string $contentType = null, ?string $downloadName = null): self
    {
        $stream = is_dir($path) ? false : @fopen($path, 'rb');
        if ($stream === false) {
            throw new HttpException("Cannot open $path for reading");
        }
        $response = new self(200, ['Content-Type' => $contentType ?? FileResponse::contentType($path)], $stream);
        if ($downloadName !== null) {
            $response->setHeader('Content-Disposition', FileResponse::attachment($downloadName));
        }
        return $response;
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
        $lower = self::COMMON[$name] ?? null;
        // A common name not set yet with a clean string value: nearly every call. Three memchr() scans are
        // cheaper than strcspn(), which compares each byte with each listed character.
        if ($lower !== null && \is_string($value) && !isset($this->names[$lower])
            && !\str_contains($value, "\r") && !\str_contains($value, "\n") && !\str_contains($value, "\0")) {
            $this->names[$lower] = $name;
            $this->headers[$name] = [$value];
            return;
        }
        $values = \is_array($value) ? array_values($value) : [$value];
        foreach ($values as $item) {
            FieldSyntax::assertResponseField($name, $item);
        }
        if ($values === []) {
            FieldSyntax::assertResponseField($name, '');
        }
        $lower ??= strtolower($name);
        $written = $this->names[$lower] ?? null;
        if ($written !== null && $written !== $name) {
            $this->rename($written, $name);
        }
        $this->names[$lower] = $name;
        $this->headers[$name] = $values;
    }

    public function addHeader(string $name, string $value): void
    {
        $lower = self::COMMON[$name] ?? null;
        if ($lower === null || \str_contains($value, "\r") || \str_contains($value, "\n") || \str_contains($value, "\0")) {
            FieldSyntax::assertResponseField($name, $value);
            $lower ??= strtolower($name);
        }
        $written = $this->names[$lower] ??= $name;
        $this->headers[$written][] = $value;
    }

    public function removeHeader(string $name): void
    {
        $lower = self::COMMON[$name] ?? strtolower($name);
        $written = $this->names[$lower] ?? null;
        if ($written !== null) {
            unset($this->headers[$written], $this->names[$lower]);
        }
    }

    public function header(string $name): ?string
    {
        $written = $this->names[self::COMMON[$name] ?? strtolower($name)] ?? null;
        return $written === null ? null : $this->headers[$written][0] ?? null;
    }

    public function hasHeader(string $name): bool
    {
        return isset($this->names[self::COMMON[$name] ?? strtolower($name)]);
    }

    /**
     * The Content-Length the handler set, when it is a plain number (the same in every copy): what a HEAD
     * answer advertises, as Apache and nginx pass a script's own on, since a script may answer HEAD with its
     * headers alone (Symfony's BinaryFileResponse does), and the length an iterable body is sent with (cut
     * there; the connection closed when it ends short). A string body is sent with its own length. Null when
     * none was set or it is not a number.
     */
    public function declaredLength(): ?int
    {
        $written = $this->names['content-length'] ?? null;
        if ($written === null) {
            return null;
        }
        $values = $this->headers[$written];
        $value = trim($values[0] ?? '');
        if ($value === '' || \strlen($value) > 18 || strspn($value, '0123456789') !== \strlen($value)) {
            return null;
        }
        foreach ($values as $other) {
            if (trim($other) !== $value) {
                return null;
            }
        }
        return (int) $value;
    }

    /** @return array<string, list<string>> names as written */
    public function headers(): array
    {
        return $this->headers;
    }

    /**
     * Headers to put on the wire: as headers(), less the framing fields the server owns.
     *
     * @return array<string, list<string>>
     */
    public function wireHeaders(): array
    {
        $out = $this->headers;
        foreach (['content-length', 'transfer-encoding'] as $lower) {
            $written = $this->names[$lower] ?? null;
            if ($written !== null) {
                unset($out[$written]);
            }
        }
        return $out;
    }

    /** Adds a Set-Cookie header (one per cookie; setting a name twice sends both, the browser keeps the last). */
    public function setCookie(Cookie $cookie): void
    {
        $this->addHeader('Set-Cookie', $cookie->headerValue());
    }

    /** setCookie(new Cookie(...)) that returns this same (mutable) response, to chain calls. */
    public function withCookie(
        string $name,
        string $value = '',
        \DateTimeInterface|int|null $expires = null,
        ?int $maxAge = null,
        ?string $path = '/',
        ?string $domain = null,
        bool $secure = false,
        bool $httpOnly = true,
        ?string $sameSite = Cookie::SAME_SITE_LAX,
        bool $partitioned = false,
    ): self {
        $this->setCookie(new Cookie($name, $value, $expires, $maxAge, $path, $domain, $secure, $httpOnly, $sameSite, $partitioned));
        return $this;
    }

    /** Tells the browser to drop a cookie (same name, path and domain as when it was set). */
    public function deleteCookie(string $name, ?string $path = '/', ?string $domain = null): void
    {
        $this->setCookie(Cookie::expired($name, $path, $domain));
    }

    /** @return string|iterable<string>|resource|EventStream */
    public function body(): mixed
    {
        return $this->body;
    }

    /** @param string|iterable<string>|resource|EventStream $body */
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

    /** A header set again under another spelling takes the new one, in the place the old one had. */
    private function rename(string $old, string $new): void
    {
        $headers = [];
        foreach ($this->headers as $written => $values) {
            $headers[(string) $written === $old ? $new : $written] = $values;
        }
        $this->headers = $headers;
    }
}
