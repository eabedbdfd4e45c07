<?php

declare(strict_types=1);

namespace Kiln\Site\Cgi;

use Kiln\Site\Script;

/**
 * Maps `/cgi-bin/NAME/extra/path` to the executable NAME in a cgi-bin directory (subdirectories allowed:
 * `/cgi-bin/tools/run.py/x`), with `/extra/path` as PATH_INFO — like Apache's ScriptAlias.
 *
 * Each path segment up to the script is percent-decoded on its own and must be a plain name: not empty,
 * no leading dot (no `.`/`..`, no dotfiles), no `/`, `\` or NUL once decoded. The file found must be a
 * regular file whose real path (symlinks resolved) is inside the real cgi-bin directory, and executable.
 * resolve() answers a Script, 404 (no such script, or an unsafe name) or 403 (found, but not executable).
 */
final class CgiBinResolver
{
    private readonly string $directory;

    private readonly string $prefix;

    /**
     * @param string $directory the cgi-bin directory
     * @param string $prefix the URL path it is served at
     * @param string|null $documentRoot DOCUMENT_ROOT for the scripts (the site's root); null: the directory
     */
    public function __construct(string $directory, string $prefix = '/cgi-bin', private readonly ?string $documentRoot = null)
    {
        $real = \realpath($directory);
        if ($real === false || !\is_dir($real)) {
            throw new \ValueError("The cgi-bin directory $directory does not exist");
        }
        if (!\str_starts_with($prefix, '/')) {
            throw new \ValueError("The cgi-bin prefix must start with '/', got $prefix");
        }
        $this->directory = $real;
        $this->prefix = \rtrim($prefix, '/');
    }

    /** @param string $path the raw (still percent-encoded) request path */
    public function resolve(string $path): Script|int
    {
        if (!\str_starts_with($path, $this->prefix . '/')) {
            return 404;
        }
        $segments = \explode('/', \substr($path, \strlen($this->prefix) + 1));
        $file = $this->directory;
        $scriptName = $this->prefix;
        foreach ($segments as $i => $raw) {
            $name = \rawurldecode($raw);
            if ($name === '' || $name[0] === '.' || \strpbrk($name, "/\\\0") !== false) {
                return 404;
            }
            $file .= '/' . $name;
            $scriptName .= '/' . $name;
            if (\is_dir($file)) {
                continue;
            }
            if (!\is_file($file)) {
                return 404;
            }
            $real = \realpath($file);
            if ($real === false || !\str_starts_with($real, $this->directory . '/')) {
                return 404;
            }
            if (!\is_executable($real)) {
                return 403;
            }
            $rest = \array_slice($segments, $i + 1);
            $pathInfo = $rest === [] ? '' : \rawurldecode('/' . \implode('/', $rest));

            return new Script($real, $scriptName, $pathInfo, \rtrim($this->documentRoot ?? $this->directory, '/'));
        }

        return 404;
    }
}
