<?php

declare(strict_types=1);

namespace Kiln\Site;

use Kiln\Http\Request;
use Kiln\Kiln;

/**
 * The CGI meta-variables (RFC 3875 §4.1) of a request for a script, named and filled as nginx's
 * fastcgi_params + SCRIPT_FILENAME/PATH_INFO give them to php-fpm; the same array is `$_SERVER` for the
 * sequential tier, the FastCGI params for the isolated and upstream tiers, and the environment of a CGI
 * or forked script.
 *
 * Where they differ from nginx 1.22 + php-fpm on Debian, on purpose:
 * - HTTP_HOST is the Host header as sent (with its port), or the authority of an absolute-form target;
 *   Debian's fastcgi_params sends `$host` (lower-cased, port dropped), which breaks apps on a non-default
 *   port that build URLs from HTTP_HOST.
 * - a header sent several times is one variable, values joined with `, ` (Cookie: `; `), as nginx ≥ 1.23
 *   does; nginx 1.22 sends each and php-fpm keeps only the last.
 * - SERVER_NAME is the request's host (nginx: the `server_name` of the server block).
 * - no REMOTE_USER (nginx sends it empty without auth_basic).
 * - PATH_TRANSLATED (document root + PATH_INFO) when there is a PATH_INFO, as RFC 3875 §4.1.6 and Apache give it;
 *   nginx's stock fastcgi_params leave it out.
 * - when the connection's local port is unknown (Request::$localPort 0), SERVER_PORT is the Host's port,
 *   else 80 or 443; behind a trusted proxy (ForwardedClient::$port) it is the port the client reached there.
 * As Apache: the Script's env (SetEnv, RewriteRule [E=], REDIRECT_* of .htaccess files) is added beneath the
 * variables built here, none of which it replaces but REDIRECT_STATUS (an ErrorDocument script gets the
 * error's status there); QUERY_STRING is the Script's when a rewrite changed it, REQUEST_URI stays as sent.
 * As nginx: DOCUMENT_URI is the script's URL path (nginx's `$document_uri` after `try_files $fastcgi_script_name`,
 * as Debian's fastcgi-php.conf has it), without the PATH_INFO; headers whose name holds anything but letters, digits and `-` (`X_Forwarded_For`) are dropped,
 * so they cannot pose as a header a proxy set; HTTP_CONTENT_TYPE and HTTP_CONTENT_LENGTH are sent beside
 * CONTENT_TYPE and CONTENT_LENGTH; and Proxy never becomes HTTP_PROXY (httpoxy, CVE-2016-5385).
 */
final class CgiParams
{
    public const SOFTWARE = 'Kiln/' . Kiln::VERSION;

    /** Header names made only of these (lower-cased) become HTTP_* variables, as nginx's ignore_invalid_headers. */
    private const NAME_BYTES = 'abcdefghijklmnopqrstuvwxyz0123456789-';

    /** How many header names variable() remembers. */
    private const MAX_VARIABLES = 256;

    /** @var array<string, string> lower-case header name => its HTTP_* variable, '' for none */
    private static array $variables = [];

    /**
     * @param array<string, string> $extra added last, overriding what is built (PHP_VALUE, a tier's own)
     * @return array<string, string>
     */
    public static function build(Request $request, Script $script, array $extra = []): array
    {
        $head = $request->head;
        $headers = $head->headers;
        $scheme = $request->scheme();
        $target = $head->target;
        $local = $request->localPort;
        $forwardedPort = $request->forwardedClient()?->port;
        // One literal: the array is made at its size once (this runs for every script a worker serves).
        $params = [
            'SCRIPT_FILENAME' => $script->filename,
            'SCRIPT_NAME' => $script->scriptName,
            'PATH_INFO' => $script->pathInfo,
            'DOCUMENT_ROOT' => $script->documentRoot,
            'DOCUMENT_URI' => $script->scriptName,
            'REQUEST_URI' => $target !== '' && $target[0] === '/' ? $target : self::requestUri($target),
            'QUERY_STRING' => $script->queryString ?? $head->query,
            'REQUEST_METHOD' => $head->method,
            'CONTENT_TYPE' => $headers['content-type'][0] ?? '',
            'CONTENT_LENGTH' => $head->hasBody() ? (string) $request->bodySize() : ($headers['content-length'][0] ?? ''),
            'SERVER_NAME' => $head->host !== '' ? $head->host : $request->localAddress,
            'SERVER_PORT' => (string) ($forwardedPort !== null ? $forwardedPort : ($local !== 0 ? $local : self::hostPort($request, $scheme))),
            'SERVER_ADDR' => $request->localAddress,
            'SERVER_PROTOCOL' => 'HTTP/' . $head->version,
            'SERVER_SOFTWARE' => self::SOFTWARE,
            'GATEWAY_INTERFACE' => 'CGI/1.1',
            'REMOTE_ADDR' => $request->clientIp(),
            'REMOTE_PORT' => (string) $request->remotePort,
            'REQUEST_SCHEME' => $scheme,
            'REDIRECT_STATUS' => $script->env['REDIRECT_STATUS'] ?? '200',
        ];
        if ($script->pathInfo !== '') {
            $params['PATH_TRANSLATED'] = $script->documentRoot . $script->pathInfo;
        }
        if ($scheme === 'https') {
            $params['HTTPS'] = 'on';
        }
        $variables = self::$variables;
        foreach ($headers as $name => $values) {
            $variable = $variables[$name] ?? self::variable($name);
            if ($variable !== '') {
                $params[$variable] = isset($values[1]) ? implode($name === 'cookie' ? '; ' : ', ', $values) : $values[0];
            }
        }
        if ($target !== '' && $target[0] !== '/') {
            $authority = self::authority($target);
            if ($authority !== null) {
                $params['HTTP_HOST'] = $authority;
            }
        }
        if ($script->env !== []) {
            $params += $script->env;
        }
        foreach ($extra as $name => $value) {
            $params[$name] = $value;
        }
        return $params;
    }

    /**
     * $params as PHP's own FastCGI SAPIs (php-cgi, php-fpm) are given them: without REDIRECT_URL when the script
     * has a PATH_INFO. With cgi.fix_pathinfo on (PHP's default), a REDIRECT_URL beside a PATH_TRANSLATED makes
     * them run PATH_TRANSLATED as the script (Apache's `Action` handler, where SCRIPT_FILENAME is php-cgi
     * itself): "No input file specified." and a 404 for a rewrite to `caldav.php/$1`; and beside a PATH_INFO
     * alone they drop the PATH_INFO. The script's PATH_INFO is worth more than the rewrite's old path.
     *
     * @param array<string, string> $params
     * @return array<string, string>
     */
    public static function forPhpFastCgi(array $params): array
    {
        if (($params['PATH_INFO'] ?? '') !== '' && isset($params['REDIRECT_URL'])) {
            unset($params['REDIRECT_URL']);
        }
        return $params;
    }

    /** The variable of a (lower-case) header name, '' for one that gets none; remembered for the next request. */
    private static function variable(string $name): string
    {
        $variable = $name === 'proxy' || strspn($name, self::NAME_BYTES) !== \strlen($name) ? '' : 'HTTP_' . strtoupper(str_replace('-', '_', $name));
        if (\count(self::$variables) >= self::MAX_VARIABLES) {
            self::$variables = []; // made-up names must not grow the table without bound
        }
        return self::$variables[$name] = $variable;
    }

    /** The target as sent, less the `scheme://authority` of an absolute-form one (as nginx's `$request_uri`). */
    public static function requestUri(string $target): string
    {
        if ($target === '' || $target[0] === '/' || $target === '*') {
            return $target;
        }
        $rest = preg_replace('~^[A-Za-z][A-Za-z0-9+.\-]*://[^/?]*~', '', $target) ?? $target;
        return $rest === '' || $rest[0] === '?' ? '/' . $rest : $rest;
    }

    /** When the connection's own port is unknown: the Host's port, else the scheme's (Apache's UseCanonicalName Off). */
    private static function hostPort(Request $request, string $scheme): int
    {
        $host = self::authority($request->target()) ?? $request->header('host') ?? '';
        if (preg_match('/:(\d+)$/', $host, $m) === 1) {
            return (int) $m[1];
        }
        return $scheme === 'https' ? 443 : 80;
    }

    private static function authority(string $target): ?string
    {
        if ($target === '' || $target[0] === '/' || preg_match('~^[A-Za-z][A-Za-z0-9+.\-]*://([^/?]*)~', $target, $m) !== 1) {
            return null;
        }
        return $m[1];
    }
}
