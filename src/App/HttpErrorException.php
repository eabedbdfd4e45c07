<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\Http\Wire\ResponseEncoder;

/**
 * An HTTP error as data: status, headers, and a message safe to show the client. Throw it anywhere in a
 * handler or middleware; the error handler renders it (HTML, JSON or text by Accept, or a custom page).
 */
final class HttpErrorException extends \Exception
{
    /** @var array<string, string> */
    public readonly array $headers;

    /**
     * @param array<string, string> $headers e.g. ['Allow' => 'GET, HEAD'] or ['Retry-After' => '1']
     */
    public function __construct(
        public readonly int $status,
        string $message = '',
        array $headers = [],
        ?\Throwable $previous = null,
    ) {
        if ($status < 400 || $status > 599) {
            throw new \ValueError("HttpErrorException is for 4xx and 5xx statuses, got $status");
        }
        parent::__construct($message !== '' ? $message : ResponseEncoder::reason($status), $status, $previous);
        $this->headers = $headers;
    }

    public static function badRequest(string $message = ''): self
    {
        return new self(400, $message);
    }

    public static function unauthorized(string $realm = 'Restricted'): self
    {
        return new self(401, '', ['WWW-Authenticate' => 'Basic realm="' . addcslashes($realm, '"\\') . '", charset="UTF-8"']);
    }

    public static function forbidden(string $message = ''): self
    {
        return new self(403, $message);
    }

    public static function notFound(string $message = ''): self
    {
        return new self(404, $message);
    }

    /** @param list<string> $allowed */
    public static function methodNotAllowed(array $allowed): self
    {
        return new self(405, '', ['Allow' => implode(', ', $allowed)]);
    }

    public static function payloadTooLarge(string $message = ''): self
    {
        return new self(413, $message);
    }

    public static function tooManyRequests(int $retryAfter): self
    {
        return new self(429, '', ['Retry-After' => (string) max(1, $retryAfter)]);
    }

    public static function serviceUnavailable(int $retryAfter = 1): self
    {
        return new self(503, '', ['Retry-After' => (string) max(1, $retryAfter)]);
    }
}
