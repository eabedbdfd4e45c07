<?php

declare(strict_types=1);

namespace Kiln\App\Handler\Internal;

use Kiln\Http\Response;

/**
 * The two responses handlers return most (a string as text/html, an array as JSON), each made by copying
 * one made once and giving the copy its body. A new Response checks each header it is given (name and
 * value) and builds its header tables; a copy of a response nobody else holds is the same object without
 * that work (measured: 2,976 instructions for `new Response(200, ['Content-Type' => …], $body)`, 815 for a
 * clone and setBody(), opcache on, JIT off).
 *
 * The originals never leave this class, so every copy starts exactly as a new Response would.
 *
 * @internal used by PreparedHandler and ResultConverter
 */
final class Prototypes
{
    public const HTML = 'text/html; charset=utf-8';

    /** Response::json()'s flags: a body made here is the one Response::json() would make. */
    public const JSON_FLAGS = JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE;

    private static ?Response $html = null;

    private static ?Response $json = null;

    /** 200, Content-Type text/html; charset=utf-8, this body: as `Response::html($body)`. */
    public static function html(string $body): Response
    {
        $response = clone (self::$html ??= new Response(200, ['Content-Type' => self::HTML]));
        $response->setBody($body);
        return $response;
    }

    /**
     * 200, Content-Type application/json, the data encoded: as `Response::json($data)`.
     *
     * @param array<mixed>|\JsonSerializable $data
     * @throws \JsonException when the data cannot be encoded
     */
    public static function json(array|\JsonSerializable $data): Response
    {
        $body = \json_encode($data, self::JSON_FLAGS);
        $response = clone (self::$json ??= new Response(200, ['Content-Type' => 'application/json']));
        $response->setBody($body);
        return $response;
    }
}
