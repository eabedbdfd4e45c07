<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\Wire\RequestHead;

/** Builds requests and terminal handlers for middleware tests. */
final class Requests
{
    /** @param array<string, string|list<string>> $headers any case; a list gives repeated fields */
    public static function make(
        string $method = 'GET',
        string $target = '/',
        array $headers = [],
        string $body = '',
        string $remoteAddress = '127.0.0.1',
        bool $chunked = false,
    ): Request {
        $lower = [];
        foreach ($headers as $name => $value) {
            $lower[strtolower($name)] = \is_array($value) ? $value : [$value];
        }
        [$path, $query] = array_pad(explode('?', $target, 2), 2, '');
        $kind = match (true) {
            $chunked => RequestHead::BODY_CHUNKED,
            $body !== '' => RequestHead::BODY_LENGTH,
            default => RequestHead::BODY_NONE,
        };
        $length = match ($kind) {
            RequestHead::BODY_CHUNKED => -1,
            RequestHead::BODY_LENGTH => (int) ($lower['content-length'][0] ?? \strlen($body)),
            default => 0,
        };
        $head = new RequestHead($method, $target, '1.1', $lower, $path, $query, 'localhost', $kind, $length, true, false);
        return new Request($head, $body, null, $remoteAddress, 40000);
    }

    /**
     * A terminal handler: returns what $respond gives (a fresh 200 text response by default), remembers
     * the request it saw and how often it ran.
     *
     * @param (\Closure(Request): Response)|null $respond
     */
    public static function next(?\Closure $respond = null): RequestHandler
    {
        return new class ($respond) implements RequestHandler {
            public ?Request $seen = null;

            public int $calls = 0;

            /** @param (\Closure(Request): Response)|null $respond */
            public function __construct(private readonly ?\Closure $respond) {}

            public function handle(Request $request): Response
            {
                $this->seen = $request;
                $this->calls++;
                return $this->respond === null ? Response::text('ok') : ($this->respond)($request);
            }
        };
    }

    /** A handler answering with this response. */
    public static function returning(Response $response): RequestHandler
    {
        return self::next(static fn(): Response => $response);
    }
}
