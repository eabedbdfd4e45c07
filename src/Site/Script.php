<?php

declare(strict_types=1);

namespace Kiln\Site;

/**
 * A PHP (or CGI) script a request resolved to under a document root, with the names CGI gives its parts:
 * `/blog/index.php/2024/hello?x=1` → scriptName `/blog/index.php`, pathInfo `/2024/hello`; and what the
 * document root's `.htaccess` files add for this request (a rewritten query, variables, php.ini values).
 */
final class Script
{
    /**
     * @param array<string, string> $env added to the CGI variables, never replacing one CgiParams builds
     *                                   (but REDIRECT_STATUS): SetEnv, RewriteRule [E=], REDIRECT_*
     * @param array<string, string> $phpIni php.ini values for this request (`php_value`); the runner applies
     *                                      them if its tier can
     */
    public function __construct(
        /**
         * Absolute path of the script file as requested, under the document root (or the cgi-bin directory):
         * symlinks on the way are not resolved, as Apache and nginx's `$document_root$fastcgi_script_name`
         * give it (`SCRIPT_FILENAME`, and the script's working directory).
         */
        public readonly string $filename,
        /** URL path of the script, decoded: `/blog/index.php` (`SCRIPT_NAME`). */
        public readonly string $scriptName,
        /** Decoded path after the script name, `''` when none (`PATH_INFO`). */
        public readonly string $pathInfo,
        /** Absolute, symlink-free document root, no trailing slash (`DOCUMENT_ROOT`). */
        public readonly string $documentRoot,
        /** `QUERY_STRING` (raw) when a rewrite changed it; null: the request's own. */
        public readonly ?string $queryString = null,
        public readonly array $env = [],
        public readonly array $phpIni = [],
        /** The symlink-free path of the file, when it differs from $filename (a link on the way); null: the same. */
        private readonly ?string $realPath = null,
    ) {}

    /** The symlink-free path of the script file (what PHP and opcache know it by). */
    public function realPath(): string
    {
        return $this->realPath ?? $this->filename;
    }

    /**
     * The same script with a query string, variables and php.ini values for this request.
     *
     * @param array<string, string> $env
     * @param array<string, string> $phpIni
     */
    public function with(?string $queryString, array $env, array $phpIni): self
    {
        return new self($this->filename, $this->scriptName, $this->pathInfo, $this->documentRoot, $queryString, $env, $phpIni, $this->realPath);
    }
}
