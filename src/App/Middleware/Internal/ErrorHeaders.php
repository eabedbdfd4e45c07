<?php

declare(strict_types=1);

namespace Kiln\App\Middleware\Internal;

use Kiln\App\HttpErrorException;

/**
 * Gives an HttpErrorException thrown further down the headers a middleware would have put on the response (CORS,
 * request id, security headers), so error responses carry them too. Headers the error already has win.
 *
 * @internal
 */
final class ErrorHeaders
{
    /** @param array<string, string> $headers */
    public static function with(HttpErrorException $error, array $headers): HttpErrorException
    {
        $merged = $error->headers;
        $present = array_change_key_case($merged);
        foreach ($headers as $name => $value) {
            if (!isset($present[strtolower($name)])) {
                $merged[$name] = $value;
            }
        }
        if ($merged === $error->headers) {
            return $error;
        }
        return new HttpErrorException($error->status, $error->getMessage(), $merged, $error);
    }
}
