<?php

declare(strict_types=1);

namespace Kiln\App\Handler;

use Kiln\App\Handler\Internal\Prototypes;
use Kiln\Http\ErrorResponse;
use Kiln\Http\Response;
use Kiln\Http\Wire\ResponseEncoder;

/**
 * The return contract of handlers: turns what a handler returned, and what it echoed, into a Response.
 *
 * - string: 200 text/html; array or JsonSerializable: 200 application/json; Response: as it is;
 *   Traversable (a Generator): 200 text/html, streamed as it is produced, each item a string, Stringable or
 *   scalar; int: that status with its reason phrase as a plain-text body (204 and 304 with none);
 *   null: the echoed output as text/html, or 204 when nothing was echoed.
 * - Echoed output goes on the wire before the returned body: prepended to a string body, yielded first by a
 *   streamed one. For an int status the echo is the body (in place of the reason phrase); a 204 or 304
 *   cannot carry one, so there it is dropped.
 * - Echoes made while a streamed body is being produced are sent as chunks, in order with the yielded ones.
 */
final class ResultConverter
{
    private const HTML = Prototypes::HTML;

    private const STREAM_CHUNK = 65536;

    public static function convert(mixed $result, string $echoed = ''): Response
    {
        return match (true) {
            \is_string($result) => Prototypes::html($echoed . $result),
            $result === null => $echoed === '' ? new Response(204) : Prototypes::html($echoed),
            $result instanceof Response => self::withEcho($result, $echoed),
            \is_array($result), $result instanceof \JsonSerializable => self::json($result, $echoed),
            \is_int($result) => self::statusWithEcho($result, $echoed),
            $result instanceof \Traversable => new Response(200, ['Content-Type' => self::HTML], self::stream($result, $echoed)),
            default => throw new \TypeError('A handler returned ' . get_debug_type($result) . '; return a string '
                . '(HTML), an array or JsonSerializable (JSON), an int (a status), a Response, a Generator or '
                . 'other Traversable of strings (streamed), or null (the echoed output, or 204)'),
        };
    }

    /** A bare status response: the reason phrase as plain text, or no body where HTTP allows none. */
    public static function status(int $status): Response
    {
        if (!self::allowsBody($status)) {
            return new Response($status);
        }
        if ($status >= 400) {
            return ErrorResponse::plain($status);
        }
        return Response::text($status . ' ' . ResponseEncoder::reason($status) . "\n", $status);
    }

    /**
     * Streams items as strings, capturing what each step echoes and sending it first.
     *
     * @param iterable<mixed> $items
     * @return \Generator<int, string>
     */
    public static function stream(iterable $items, string $echoed = ''): \Generator
    {
        if ($echoed !== '') {
            yield $echoed;
        }
        if (\is_array($items)) {
            foreach ($items as $item) {
                yield self::chunk($item);
            }
            return;
        }
        $iterator = $items instanceof \Iterator ? $items : new \IteratorIterator($items);
        $capture = OutputCapture::instance();
        for ($first = true; ; $first = false) {
            $outer = $capture->begin();
            try {
                if ($first) {
                    $iterator->rewind();
                } else {
                    $iterator->next();
                }
                $valid = $iterator->valid();
                $item = $valid ? $iterator->current() : null;
            } catch (\Throwable $e) {
                $capture->end($outer);
                throw $e;
            }
            $echo = $capture->end($outer);
            if ($echo !== '') {
                yield $echo;
            }
            if (!$valid) {
                return;
            }
            yield self::chunk($item);
        }
    }

    private static function chunk(mixed $item): string
    {
        if (\is_string($item)) {
            return $item;
        }
        if (\is_scalar($item) || $item instanceof \Stringable) {
            return (string) $item;
        }
        throw new \TypeError('A streamed body yielded ' . get_debug_type($item)
            . '; yield strings, Stringable objects or scalars');
    }

    /** @param array<mixed>|\JsonSerializable $data */
    private static function json(array|\JsonSerializable $data, string $echoed): Response
    {
        $response = Prototypes::json($data);
        if ($echoed !== '') {
            $response->setBody($echoed . self::stringBody($response));
        }
        return $response;
    }

    private static function statusWithEcho(int $status, string $echoed): Response
    {
        if ($echoed === '' || !self::allowsBody($status)) {
            return self::status($status);
        }
        return new Response($status, ['Content-Type' => self::HTML], $echoed);
    }

    private static function withEcho(Response $response, string $echoed): Response
    {
        if ($echoed === '') {
            $body = $response->body();
            if ($body instanceof \Traversable) {
                $response->setBody(self::stream($body));
            }
            return $response;
        }
        $response->removeHeader('Content-Length'); // what the handler echoed goes first: the body is longer now
        $body = $response->body();
        if (\is_string($body)) {
            if ($body === '' && !$response->hasHeader('Content-Type')) {
                $response->setHeader('Content-Type', self::HTML);
            }
            $response->setBody($echoed . $body);
        } elseif (is_iterable($body)) {
            $response->setBody(self::stream($body, $echoed));
        } elseif (\is_resource($body)) {
            $response->setBody(self::resource($body, $echoed));
        }
        return $response;
    }

    /**
     * @param resource $stream
     * @return \Generator<int, string>
     */
    private static function resource(mixed $stream, string $echoed): \Generator
    {
        yield $echoed;
        try {
            while (!feof($stream)) {
                $chunk = fread($stream, self::STREAM_CHUNK);
                if ($chunk === false) {
                    throw new \RuntimeException('Cannot read the response body stream');
                }
                if ($chunk !== '') {
                    yield $chunk;
                }
            }
        } finally {
            fclose($stream);
        }
    }

    private static function stringBody(Response $response): string
    {
        $body = $response->body();
        return \is_string($body) ? $body : '';
    }

    private static function allowsBody(int $status): bool
    {
        return $status >= 200 && $status !== 204 && $status !== 304;
    }
}
