<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * The `%{NAME}` server variables of mod_rewrite, as they read in per-directory context for one round:
 * REQUEST_URI is the current (maybe rewritten) decoded path, REQUEST_FILENAME the file it maps to (up to
 * the first part that is not a directory), ENV: the variables set by E= so far.
 */
final class Variables
{
    /** Names (upper-case) Kiln knows; `HTTP:`, `ENV:`, `SSL:` prefixes and any `HTTP_*` header name are too. */
    public const KNOWN = [
        'REQUEST_URI', 'REQUEST_FILENAME', 'SCRIPT_FILENAME', 'PATH_INFO', 'QUERY_STRING', 'REQUEST_METHOD', 'REQUEST_SCHEME',
        'HTTPS', 'THE_REQUEST', 'REMOTE_ADDR', 'REMOTE_HOST', 'REMOTE_PORT', 'REMOTE_USER', 'REMOTE_IDENT', 'AUTH_TYPE',
        'SERVER_NAME', 'SERVER_ADDR', 'SERVER_PORT', 'SERVER_PROTOCOL', 'SERVER_SOFTWARE', 'SERVER_ADMIN',
        'DOCUMENT_ROOT', 'CONTEXT_DOCUMENT_ROOT', 'CONTEXT_PREFIX', 'IS_SUBREQ', 'API_VERSION',
    ];

    /** @param array<string, string> $env */
    public function __construct(
        private readonly RequestFacts $facts,
        private readonly string $root,
        private readonly string $uri,
        private readonly string $query,
        private readonly string $filename,
        private readonly string $pathInfo,
        public array $env,
    ) {}

    public static function isKnown(string $name): bool
    {
        $upper = strtoupper($name);
        return \in_array($upper, self::KNOWN, true) || str_starts_with($upper, 'HTTP')
            || str_starts_with($upper, 'ENV:') || str_starts_with($upper, 'SSL:');
    }

    public function get(string $name): string
    {
        $upper = strtoupper($name);
        $colon = strpos($upper, ':');
        if ($colon !== false) {
            $key = substr($name, $colon + 1);
            return match (substr($upper, 0, $colon)) {
                'HTTP' => $this->facts->header($key),
                'ENV' => $this->env[$key] ?? '',
                default => '',
            };
        }
        $facts = $this->facts;
        return match ($upper) {
            'REQUEST_URI' => $this->uri,
            'REQUEST_FILENAME', 'SCRIPT_FILENAME' => $this->filename,
            'PATH_INFO' => $this->pathInfo,
            'QUERY_STRING' => $this->query,
            'REQUEST_METHOD' => $facts->method,
            'REQUEST_SCHEME' => $facts->scheme(),
            'HTTPS' => $facts->https ? 'on' : 'off',
            'THE_REQUEST' => $facts->theRequest(),
            'REMOTE_ADDR', 'REMOTE_HOST' => $facts->remoteAddress,
            'REMOTE_PORT' => (string) $facts->remotePort,
            'SERVER_NAME' => $facts->serverName(),
            'SERVER_ADDR' => $facts->serverAddress,
            'SERVER_PORT' => (string) ($facts->serverPort !== 0 ? $facts->serverPort : ($facts->https ? 443 : 80)),
            'SERVER_PROTOCOL' => $facts->protocol,
            'SERVER_SOFTWARE' => 'Kiln',
            'DOCUMENT_ROOT', 'CONTEXT_DOCUMENT_ROOT' => $this->root,
            'IS_SUBREQ' => 'false',
            'API_VERSION' => '20120211:0',
            default => str_starts_with($upper, 'HTTP_') ? $facts->header(str_replace('_', '-', substr($upper, 5))) : '',
        };
    }
}
