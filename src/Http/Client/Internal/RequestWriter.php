<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

use Kiln\Http\Client\ClientRequest;

/**
 * Serialises a request head (sans-I/O) and frames streamed body pieces.
 *
 * @internal
 */
final class RequestWriter
{
    /** Headers the client owns: framing is derived from the body, Host from the URL. */
    private const MANAGED = ['host', 'content-length', 'transfer-encoding'];

    private function __construct() {}

    /** @throws \ValueError on a header name that is not a token or a value with CR, LF or NUL */
    public static function assertHeader(string $name, mixed $value): void
    {
        if (\preg_match('/^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$/D', $name) !== 1) {
            throw new \ValueError("Invalid header name \"{$name}\"");
        }
        if (!\is_string($value) || \strpbrk($value, "\r\n\0") !== false) {
            throw new \ValueError("Header {$name} must be a string without CR, LF or NUL");
        }
    }

    /** @param array<string, string> $defaults */
    public static function head(ClientRequest $request, array $defaults): string
    {
        $url = $request->parsedUrl();
        $method = $request->method();
        $body = $request->body();
        $head = "{$method} {$url->target} HTTP/1.1\r\nHost: {$url->authority()}\r\n";
        $given = [];
        foreach ($request->headers() as $name => $values) {
            $lower = \strtolower($name);
            $given[$lower] = true;
            if (!\in_array($lower, self::MANAGED, true)) {
                foreach ($values as $value) {
                    $head .= "{$name}: {$value}\r\n";
                }
            }
        }
        foreach ($defaults as $name => $value) {
            if (!isset($given[\strtolower($name)])) {
                $head .= "{$name}: {$value}\r\n";
            }
        }
        if (!\is_string($body)) {
            $head .= "Transfer-Encoding: chunked\r\n";
        } elseif ($body !== '' || \in_array(\strtoupper($method), ['POST', 'PUT', 'PATCH'], true)) {
            $head .= 'Content-Length: ' . \strlen($body) . "\r\n";
        }

        return $head . "\r\n";
    }

    public static function chunk(string $piece): string
    {
        return \dechex(\strlen($piece)) . "\r\n" . $piece . "\r\n";
    }

    public static function lastChunk(): string
    {
        return "0\r\n\r\n";
    }
}
