<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

use Kiln\Http\Response;

/** A response's whole body as a string, whatever form it has (string, stream, iterable); a stream is closed. */
final class ResponseBody
{
    public static function of(Response $response): string
    {
        $body = $response->body();
        if (\is_resource($body)) {
            $content = (string) stream_get_contents($body);
            fclose($body);
            return $content;
        }
        if (\is_string($body)) {
            return $body;
        }
        \assert(is_iterable($body));
        $content = '';
        foreach ($body as $chunk) {
            $content .= $chunk;
        }
        return $content;
    }
}
