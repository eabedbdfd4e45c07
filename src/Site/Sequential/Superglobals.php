<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\Body\BodyLimits;
use Kiln\Http\Body\ScriptForm;
use Kiln\Http\Request;

/**
 * Fills PHP's superglobals for one request, as a web SAPI does before the script starts:
 *
 * - `$_SERVER`: the CGI meta-variables given (CgiParams::build()), then PHP_SELF, REQUEST_TIME_FLOAT,
 *   REQUEST_TIME and the PHP_AUTH_* of an Authorization header (AuthVariables), as php-fpm adds them; no
 *   argv/argc (register_argc_argv is a CLI affair);
 * - `$_GET` from the QUERY_STRING given (an .htaccess rewrite may have changed it), `$_COOKIE` from the Cookie header as PHP parses it (see cookies());
 * - `$_POST` and `$_FILES` for a POST with an urlencoded or multipart/form-data body only, under PHP's own limits
 *   (ScriptForm);
 * - `$_REQUEST` merged from them by `request_order` (else `variables_order`), `$_ENV` only when
 *   `variables_order` holds E (the worker's environment).
 *
 * @api reused by the fork tier
 */
final class Superglobals
{
    /** @var array{list<string>, bool}|null see order() */
    private static ?array $order = null;

    /**
     * @param array<string, string> $server the CGI meta-variables of the request
     * @return list<string> temporary paths of the uploaded files (for UploadTable)
     * @throws BadRequestBodyException for a malformed or oversized form body (answer it with its status)
     */
    public static function install(array $server, Request $request, ?float $time = null): array
    {
        $time ??= microtime(true);
        /** @var array<string, string|int|float> $server */
        $server['PHP_SELF'] = ($server['SCRIPT_NAME'] ?? '') . ($server['PATH_INFO'] ?? '');
        $server['REQUEST_TIME_FLOAT'] = $time;
        $server['REQUEST_TIME'] = (int) $time;
        if (isset($server['HTTP_AUTHORIZATION'])) {
            foreach (AuthVariables::of((string) $server['HTTP_AUTHORIZATION']) as $name => $value) {
                $server[$name] = $value;
            }
        }
        $post = $files = $paths = [];
        if ($request->method() === 'POST') {
            // As PHP reads it, under this PHP's upload_max_filesize, max_file_uploads, post_max_size and max_input_vars.
            $body = $request->isBodySpooled() ? $request->bodyStream() : $request->body();
            $form = ScriptForm::read($request->header('content-type') ?? '', $request->bodySize(), $body, BodyLimits::forScripts());
            $request->keepUploads($form->uploads);
            foreach ($form->warnings as $warning) {
                error_log("PHP Warning:  $warning in Unknown on line 0");
            }
            $post = $form->post;
            $files = UploadedFiles::toGlobal($form->files, $paths);
        }
        $get = self::query($server['QUERY_STRING'] ?? $request->queryString(), $request);
        $cookie = self::cookies($request);
        $_SERVER = $server;
        $_GET = $get;
        $_POST = $post;
        $_COOKIE = $cookie;
        $_FILES = $files;
        $_REQUEST = $get === [] && $post === [] && $cookie === [] ? [] : self::request(['G' => $get, 'P' => $post, 'C' => $cookie]);
        $_ENV = (self::$order ??= self::order())[1] ? getenv() : [];
        return $paths;
    }

    /**
     * The letters of `request_order` (else `variables_order`) and whether `variables_order` holds E. Both can
     * only be set when PHP starts (PHP_INI_PERDIR), so they are read once.
     *
     * @return array{list<string>, bool}
     */
    private static function order(): array
    {
        $variables = strtoupper((string) ini_get('variables_order'));
        $request = strtoupper((string) ini_get('request_order'));
        return [str_split($request !== '' ? $request : $variables), str_contains($variables, 'E')];
    }

    /** Empties them between requests, so no request's data lingers in the worker. */
    public static function clear(): void
    {
        $_SERVER = $_GET = $_POST = $_COOKIE = $_FILES = $_REQUEST = $_ENV = [];
    }

    /**
     * `$_GET`: the request's own parsed query when QUERY_STRING is the request's, else QUERY_STRING parsed.
     *
     * @return array<array-key, mixed>
     */
    private static function query(string|int|float $queryString, Request $request): array
    {
        $queryString = (string) $queryString;
        if ($queryString === $request->queryString()) {
            return $request->query();
        }
        parse_str($queryString, $get);
        return $get;
    }

    /**
     * The Cookie header parsed as PHP parses it: pairs split on `;`, leading blanks of a name dropped, values
     * raw-url-decoded (a `+` stays), a name without `=` gets '', the first value of a name wins, names
     * mangled by PHP's variable rules.
     *
     * @return array<array-key, mixed>
     */
    private static function cookies(Request $request): array
    {
        $headers = $request->head->headers['cookie'] ?? null;
        return $headers === null ? [] : self::cookieHeader(implode('; ', $headers));
    }

    /**
     * `$_COOKIE` from a Cookie header (several joined with `; `, as HTTP_COOKIE has them), parsed as cookies() says.
     *
     * @return array<array-key, mixed>
     */
    public static function cookieHeader(string $header): array
    {
        $seen = $query = [];
        foreach (explode(';', $header) as $pair) {
            $pair = ltrim($pair, " \t\n\r\v\f");
            if ($pair === '' || $pair[0] === '=') {
                continue;
            }
            $eq = strpos($pair, '=');
            $name = $eq === false ? $pair : substr($pair, 0, $eq);
            if (!str_ends_with($name, '[]')) {
                if (isset($seen[$name])) {
                    continue;
                }
                $seen[$name] = true;
            }
            $value = $eq === false ? '' : rawurldecode(substr($pair, $eq + 1));
            $query[] = rawurlencode($name) . '=' . rawurlencode($value);
        }
        parse_str(implode('&', $query), $cookies);
        return $cookies;
    }

    /**
     * @param array{G: array<array-key, mixed>, P: array<array-key, mixed>, C: array<array-key, mixed>} $sources
     * @return array<array-key, mixed>
     */
    private static function request(array $sources): array
    {
        $merged = [];
        foreach ((self::$order ??= self::order())[0] as $letter) {
            if (isset($sources[$letter]) && $sources[$letter] !== []) {
                $merged = $merged === [] ? $sources[$letter] : array_replace_recursive($merged, $sources[$letter]);
            }
        }
        return $merged;
    }
}
