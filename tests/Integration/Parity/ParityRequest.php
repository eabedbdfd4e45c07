<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

/**
 * One request of a parity case, sent byte for byte the same to both servers. In header values `{session}`
 * is replaced by the session id the same server issued earlier in the case (a session across requests).
 */
final class ParityRequest
{
    /** @param list<array{string, string}> $headers sent after `Host` (always `localhost:PORT`), before `Content-Length` */
    public function __construct(
        public readonly string $method,
        public readonly string $target,
        public readonly array $headers = [],
        public readonly string $body = '',
        public readonly string $protocol = 'HTTP/1.1',
    ) {}

    public static function get(string $target, string ...$headers): self
    {
        return new self('GET', $target, self::headers($headers));
    }

    public static function post(string $target, string $contentType, string $body, string ...$headers): self
    {
        return new self('POST', $target, [['Content-Type', $contentType], ...self::headers($headers)], $body);
    }

    /**
     * @param array<string, string> $fields
     * @param list<array{string, string, string, string}> $files field name, file name, content type, content
     */
    public static function multipart(string $target, array $fields, array $files): self
    {
        $boundary = '----parity7MA4YWxkTrZu0gW';
        $body = '';
        foreach ($fields as $name => $value) {
            $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$name\"\r\n\r\n$value\r\n";
        }
        foreach ($files as [$field, $filename, $type, $content]) {
            $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$field\"; filename=\"$filename\"\r\n"
                . "Content-Type: $type\r\n\r\n$content\r\n";
        }
        $body .= "--$boundary--\r\n";
        return self::post($target, "multipart/form-data; boundary=$boundary", $body);
    }

    /** The exact bytes sent to a server listening on $port. */
    public function bytes(int $port, ?string $sessionId): string
    {
        $head = "{$this->method} {$this->target} {$this->protocol}\r\nHost: localhost:$port\r\n";
        foreach ($this->headers as [$name, $value]) {
            if (str_contains($value, '{session}')) {
                if ($sessionId === null) {
                    throw new \LogicException("'$name: $value' needs a session id, but no earlier request of this case got one");
                }
                $value = str_replace('{session}', $sessionId, $value);
            }
            $head .= "$name: $value\r\n";
        }
        if ($this->body !== '' || \in_array($this->method, ['POST', 'PUT', 'PATCH'], true)) {
            $head .= 'Content-Length: ' . \strlen($this->body) . "\r\n";
        }
        return $head . "Connection: close\r\n\r\n" . $this->body;
    }

    public function describe(): string
    {
        return "{$this->method} {$this->target} {$this->protocol}";
    }

    /**
     * @param array<string> $lines "Name: value"
     * @return list<array{string, string}>
     */
    private static function headers(array $lines): array
    {
        $out = [];
        foreach ($lines as $line) {
            [$name, $value] = explode(':', $line, 2) + [1 => ''];
            $out[] = [trim($name), trim($value)];
        }
        return $out;
    }
}
