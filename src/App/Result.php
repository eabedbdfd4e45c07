<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\Http\Response;
use Kiln\Http\Wire\ResponseEncoder;

/**
 * The return contract of handlers: turns what a handler returned into a Response.
 *
 * @internal
 */
final class Result
{
    public static function toResponse(mixed $result): Response
    {
        return match (true) {
            $result instanceof Response => $result,
            \is_string($result) => new Response(200, ['Content-Type' => 'text/html; charset=utf-8'], $result),
            \is_array($result), $result instanceof \JsonSerializable => Response::json($result),
            \is_int($result) => self::status($result),
            $result instanceof \Traversable => new Response(200, ['Content-Type' => 'text/html; charset=utf-8'], self::strings($result)),
            $result === null => new Response(204),
            default => throw new \TypeError('A handler returned ' . get_debug_type($result)
                . '; return a string, an array, an int status, a Response or a Generator'),
        };
    }

    public static function status(int $status): Response
    {
        return Response::text($status . ' ' . ResponseEncoder::reason($status) . "\n", $status);
    }

    /**
     * @param \Traversable<mixed> $items
     * @return \Generator<int, string>
     */
    private static function strings(\Traversable $items): \Generator
    {
        foreach ($items as $item) {
            if (!\is_scalar($item) && !$item instanceof \Stringable) {
                throw new \TypeError('A streamed body yielded ' . get_debug_type($item) . '; yield strings');
            }
            yield (string) $item;
        }
    }
}
