<?php

declare(strict_types=1);

namespace Kiln\Site;

/**
 * A PHP (or CGI) script a request resolved to under a document root, with the names CGI gives its parts:
 * `/blog/index.php/2024/hello?x=1` → scriptName `/blog/index.php`, pathInfo `/2024/hello`.
 */
final class Script
{
    public function __construct(
        /** Absolute, symlink-free path of the script file; always under the document root (or the cgi-bin directory). */
        public readonly string $filename,
        /** URL path of the script, decoded: `/blog/index.php` (`SCRIPT_NAME`). */
        public readonly string $scriptName,
        /** Decoded path after the script name, `''` when none (`PATH_INFO`). */
        public readonly string $pathInfo,
        /** Absolute, symlink-free document root, no trailing slash (`DOCUMENT_ROOT`). */
        public readonly string $documentRoot,
    ) {}
}
