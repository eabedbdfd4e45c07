<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

/**
 * What may differ between two servers running the same script, by name, and how each response is normalised so
 * that nothing else can. Everything not listed here must be equal: status, every response header the script
 * produced (names compared case-insensitively, order kept per name), and the whole JSON the fixture printed
 * ($_SERVER, $_GET, $_POST, $_COOKIE, $_FILES, $_REQUEST, php://input, getenv(), headers_list(), session).
 */
final class AcceptedDifferences
{
    /** Name => why it may differ. A normalisation is only ever applied under one of these names. */
    public const LIST = [
        'ports' => 'Each server listens on its own free port and each connection has its own client port: SERVER_PORT and '
            . 'the port in HTTP_HOST become {server-port}, REMOTE_PORT (digits) becomes {client-port}.',
        'request-time' => 'REQUEST_TIME and REQUEST_TIME_FLOAT become {request-time} when they lie between the moment the '
            . 'request was sent and the moment its answer arrived (±1 s); a value outside that window still differs.',
        'server-software' => 'SERVER_SOFTWARE names the server ("nginx/1.22.1", "Kiln/…"): any non-empty value becomes {server-software}.',
        'session-id' => 'Session ids are random: the id the script reports (session_id()) becomes {session-id} wherever it '
            . 'appears (Set-Cookie, HTTP_COOKIE, $_COOKIE, headers_list()).',
        'document-root' => "Each server's document root path becomes {document-root} in every value (SCRIPT_FILENAME, "
            . 'DOCUMENT_ROOT, ...), so the two may serve the same files from different directories.',
        'transport-headers' => 'Response headers that describe the connection or the HTTP server, not the script: Server, Date, '
            . 'Connection, Keep-Alive, Transfer-Encoding, Content-Length. Also the reason phrase (only the status code is compared).',
        'fcgi-role' => 'FCGI_ROLE=RESPONDER is put into $_SERVER by PHP\'s FastCGI SAPI itself (php-fpm, php-cgi -b); a '
            . 'server that runs PHP in-process has no FastCGI role. Dropped from $_SERVER.',
        'process-environment' => '$_SERVER keys that are neither CGI meta-variables nor PHP\'s own (see CGI_KEY) come from the '
            . 'process environment (php-fpm\'s clear_env leaves USER and HOME; each server has its own environment '
            . 'policy). Dropped from $_SERVER; the CGI variables are compared in full.',
        'server-key-order' => 'The order of $_SERVER keys follows the order the server sent its variables in; $_SERVER is '
            . 'compared as a set of key => value pairs (every other array keeps its order).',
        'path-translated' => 'PATH_TRANSLATED (document root + PATH_INFO) is sent when there is a PATH_INFO, as RFC 3875 '
            . '§4.1.6 and Apache give it; nginx\'s stock fastcgi_params leave it out. Dropped from $_SERVER.',
        'php-cgi-environment' => 'The isolated tier starts php-cgi with PHP_FCGI_CHILDREN=0 and PHP_FCGI_MAX_REQUESTS=0 (no forking, '
            . 'no exit after 500 requests: Kiln recycles the child itself), and php-cgi copies its environment into '
            . '$_SERVER. Those two keys are dropped from $_SERVER.',
        'worker-files' => 'The sequential tier runs the script inside the warm worker, so get_included_files() lists the '
            . 'worker\'s own files before the script\'s. Entries outside the document root are dropped from "included".',
        'path-info-empty' => 'PATH_INFO "" and no PATH_INFO are equivalent: nginx configs built on Debian\'s fastcgi-php.conf '
            . 'always send it (empty when there is none), Apache and the nginx wiki config only when there is one.',
    ];

    /** $_SERVER keys compared in full (everything else is process environment). */
    public const CGI_KEY = '~^(HTTP_|SERVER_|REMOTE_|REQUEST_|SCRIPT_|DOCUMENT_|CONTENT_|PHP_|REDIRECT_|ORIG_|AUTH_TYPE$|'
        . 'GATEWAY_INTERFACE$|HTTPS$|PATH_INFO$|PATH_TRANSLATED$|QUERY_STRING$|argv$|argc$)~';

    private const TRANSPORT_HEADERS = ['server', 'date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'];

    /**
     * @param array{status: int, headers: array<string, list<string>>, body: string, sent_at: float, received_at: float} $response
     * @return array{status: int, headers: array<string, list<string>>, body: mixed}
     */
    public static function normalise(array $response, ParityServer $server): array
    {
        $headers = array_diff_key($response['headers'], array_flip(self::TRANSPORT_HEADERS)); // transport-headers
        ksort($headers); // names are lower-cased by the client; the values of one name keep their order
        $body = $response['body'];
        $json = json_decode($body, true);
        if (\is_array($json)) {
            if (\is_array($json['server'] ?? null)) {
                $json['server'] = self::server($json['server'], $response['sent_at'], $response['received_at']);
            }
            if (\is_array($json['included'] ?? null)) {                        // worker-files
                $json['included'] = array_values(array_filter(
                    $json['included'],
                    static fn(mixed $file): bool => !\is_string($file) || str_starts_with($file, $server->documentRoot . '/'),
                ));
            }
            $body = $json;
        }
        $replace = [$server->documentRoot => '{document-root}'];                 // document-root
        $replace["localhost:{$server->port}"] = 'localhost:{server-port}';      // ports
        foreach (self::sessionIds($json, $response['headers']) as $id) {
            $replace[$id] = '{session-id}';                                      // session-id
        }
        $walk = static function (mixed $value, string|int|null $key = null) use (&$walk, $replace, $server): mixed {
            if (\is_array($value)) {
                $out = [];
                foreach ($value as $k => $v) {
                    $out[\is_string($k) ? strtr($k, $replace) : $k] = $walk($v, $k);
                }
                return $out;
            }
            if ($key === 'SERVER_PORT' && $value === (string) $server->port) {
                return '{server-port}';                                          // ports
            }
            return \is_string($value) ? strtr($value, $replace) : $value;
        };
        /** @var array<string, list<string>> $headers */
        $headers = $walk($headers);
        return ['status' => $response['status'], 'headers' => $headers, 'body' => $walk($body)];
    }

    /**
     * @param array<mixed> $server
     * @return array<mixed>
     */
    private static function server(array $server, float $sentAt, float $receivedAt): array
    {
        unset($server['FCGI_ROLE']);                                              // fcgi-role
        unset($server['PATH_TRANSLATED']);                                        // path-translated
        unset($server['PHP_FCGI_CHILDREN'], $server['PHP_FCGI_MAX_REQUESTS']);    // php-cgi-environment
        foreach (array_keys($server) as $key) {
            if (preg_match(self::CGI_KEY, (string) $key) !== 1) {
                unset($server[$key]);                                             // process-environment
            }
        }
        if (($server['PATH_INFO'] ?? null) === '') {
            unset($server['PATH_INFO']);                                          // path-info-empty
        }
        if (\is_string($server['SERVER_SOFTWARE'] ?? null) && $server['SERVER_SOFTWARE'] !== '') {
            $server['SERVER_SOFTWARE'] = '{server-software}';                    // server-software
        }
        if (\is_string($server['REMOTE_PORT'] ?? null) && ctype_digit($server['REMOTE_PORT'])) {
            $server['REMOTE_PORT'] = '{client-port}';                            // ports
        }
        foreach (['REQUEST_TIME', 'REQUEST_TIME_FLOAT'] as $key) {              // request-time
            $t = $server[$key] ?? null;
            if ((\is_int($t) || \is_float($t)) && $t >= floor($sentAt) - 1 && $t <= $receivedAt + 1) {
                $server[$key] = '{request-time}';
            }
        }
        ksort($server);                                                           // server-key-order
        return $server;
    }

    /**
     * @param mixed $json
     * @param array<string, list<string>> $headers
     * @return list<string> session ids seen in this response, longest first
     */
    private static function sessionIds(mixed $json, array $headers): array
    {
        $ids = [];
        if (\is_array($json) && \is_array($json['session'] ?? null) && \is_string($json['session']['id'] ?? null)) {
            $ids[] = $json['session']['id'];
        }
        foreach ($headers['set-cookie'] ?? [] as $cookie) {
            if (preg_match('~^PHPSESSID=([^;]+)~', $cookie, $m) === 1) {
                $ids[] = $m[1];
            }
        }
        $ids = array_values(array_unique(array_filter($ids, static fn(string $id): bool => \strlen($id) >= 16)));
        usort($ids, static fn(string $a, string $b): int => \strlen($b) <=> \strlen($a));
        return $ids;
    }
}
