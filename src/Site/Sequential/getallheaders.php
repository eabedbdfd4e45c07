<?php

declare(strict_types=1);

/**
 * getallheaders() as php-fpm defines it (the CLI does not): the request headers from $_SERVER's HTTP_*
 * variables (and CONTENT_TYPE / CONTENT_LENGTH), names as `Accept-Language`. Loaded by the sequential
 * tier's Runtime when PHP has no such function.
 *
 * @return array<string, string>
 */
function getallheaders(): array
{
    $headers = [];
    foreach ($_SERVER as $name => $value) {
        $name = (string) $name;
        if (str_starts_with($name, 'HTTP_')) {
            $name = substr($name, 5);
        } elseif ($name !== 'CONTENT_TYPE' && $name !== 'CONTENT_LENGTH') {
            continue;
        }
        $headers[ucwords(strtolower(str_replace('_', '-', $name)), '-')] = \is_scalar($value) ? (string) $value : '';
    }
    return $headers;
}
