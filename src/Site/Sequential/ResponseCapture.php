<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Http\Response;

/**
 * The response a script made with PHP's own functions: the status of http_response_code() (which
 * `header('HTTP/1.1 404 …')` and `header('Location: …')` set natively), every header of headers_list() in
 * order (each Set-Cookie separately), and the body printed. As behind nginx + php-fpm:
 *
 * - a `Status: 404 Not Found` header sets the status and is not sent;
 * - without a Content-Type, the one PHP would send is added: `default_mimetype`, with
 *   `; charset=` + `default_charset` for text types (`text/html; charset=UTF-8`);
 * - a header the HTTP layer refuses (a name that is not a token, which PHP allows) is dropped and reported
 *   to $onRefused.
 *
 * @api reused by the fork tier
 */
final class ResponseCapture
{
    /** @param (\Closure(string): void)|null $onRefused gets a message for each header dropped */
    public static function build(string $body, ?\Closure $onRefused = null): Response
    {
        $status = http_response_code();
        $status = \is_int($status) && $status >= 100 && $status <= 599 ? $status : 200;
        $lines = headers_list();
        if ($lines === []) { // the common case: a status and a body, and the type PHP would send
            $type = self::defaultContentType();
            return new Response($status, $type === '' ? [] : ['Content-Type' => $type], $body);
        }
        $response = new Response($status, [], $body);
        $typed = false;
        foreach ($lines as $line) {
            $colon = strpos($line, ':');
            if ($colon === false) {
                continue;
            }
            $name = rtrim(substr($line, 0, $colon), " \t");
            $value = trim(substr($line, $colon + 1), " \t");
            $lower = strtolower($name);
            if ($lower === 'status') {
                if (preg_match('/^([1-5]\d\d)\b/', $value, $m) === 1) {
                    $response->setStatus((int) $m[1]);
                }
                continue;
            }
            if ($lower === 'content-type') {
                $typed = true;
                $name = 'Content-Type'; // PHP writes `Content-type`; Apache and nginx send `Content-Type`
            }
            try {
                $response->addHeader($name, $value);
            } catch (\ValueError $e) {
                $onRefused?->__invoke("dropped the header '$line' a script set: " . $e->getMessage());
            }
        }
        if (!$typed) {
            $type = self::defaultContentType();
            if ($type !== '') {
                $response->setHeader('Content-Type', $type);
            }
        }
        return $response;
    }

    /** What PHP sends when a script sets no Content-Type. */
    public static function defaultContentType(): string
    {
        $type = (string) ini_get('default_mimetype');
        $charset = (string) ini_get('default_charset');
        if ($type !== '' && $charset !== '' && strncasecmp($type, 'text/', 5) === 0) {
            return "$type; charset=$charset";
        }
        return $type;
    }
}
