<?php

declare(strict_types=1);

/*
 * getallheaders() and apache_request_headers() as mod_php, php-fpm and php-cgi define them (the CLI has neither;
 * the second is the first under its Apache name): the request headers from $_SERVER's HTTP_* variables (and
 * CONTENT_TYPE / CONTENT_LENGTH), names as `Accept-Language`. Loaded by the sequential tier's Runtime and, for
 * the fork tier, by ScriptChild in the fork server (its children inherit them), for each PHP lacks.
 */

if (!function_exists('getallheaders')) {
    /** @return array<string, string> */
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
}

if (!function_exists('apache_request_headers')) {
    /** @return array<string, string> */
    function apache_request_headers(): array
    {
        return getallheaders();
    }
}
