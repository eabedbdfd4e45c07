<?php

declare(strict_types=1);

namespace Kiln\Site;

/**
 * Maps a request path (raw, as on the request line) to what a document root serves for it: a static file,
 * a script to run (with SCRIPT_NAME / PATH_INFO split), a directory redirect, or a refusal.
 *
 * Rules, in order: malformed percent-encoding, encoded `/` or `\`, NUL and control bytes → 400; decoded
 * once, empty and `.` segments dropped, `..` applied (climbing above the root → 400). Then the file system
 * is walked: a segment starting with a dot (but a leading `/.well-known/`) → 404 unless a script comes
 * before it, whose PATH_INFO it is (`/caldav.php/.well-known/caldav`, run as under Apache); a file that has a
 * script extension is run with the rest of the path as PATH_INFO (`/index.php/a/b`); `/page` reaches
 * `page.php` when no `page` exists; a directory without its slash → 301, with it → its index file (in
 * order), else 403; anything else → the front controller (`/index.php`) when it exists and the caller did
 * not turn it off for the request, else 404. Whatever is served must resolve (symlinks followed) under the
 * root, or through links out of it that the SymlinkPolicy allows, else 404 (a refused link says why, for the
 * log); PHP sources and their backups are never served as files (403).
 *
 * Each call clears PHP's stat cache (a long-running worker must see files come and go) but keeps its
 * realpath cache (`realpath_cache_ttl`): a symlink re-pointed may be seen late by that many seconds. What a
 * path's text says (its segments, or its refusal) is remembered for the next request for the same path, and
 * what a file named by a path is (script, static file, refusal) for as long as the realpath cache would
 * give the same answer. A script opcache holds is not looked at again for `opcache.revalidate_freq` seconds
 * while opcache still holds it (opcache runs its cached code that long without looking at the file
 * either; the sequential tier's CodeRevalidation drops a deleted one): a deleted script answers 404 that
 * much later at most. New files, static files and everything else are looked at every time.
 */
final class PathResolver
{
    /** How many paths parse() remembers. */
    private const MAX_PARSED = 1024;

    /** Never sent as files: PHP sources and their editor/backup copies (any case). */
    private const SOURCE = '/\.(php\d?|phtml|phps|phar|inc)(~|\.bak|\.orig|\.swp|\.save|\.old|\.dist)?$/i';

    private readonly string $root;

    private readonly ?string $cgiBin;

    /**
     * @var array<string, array{list<string>, bool, int}|Refusal> raw path => what parse() made of it: the segments,
     *      whether it ends in a slash, the index of its first hidden segment (-1: none)
     */
    private array $parsed = [];

    /**
     * @var array<string, array{Script|StaticFile|Refusal, int, int}> raw path of a file => what file() made of it,
     *      until when (time()) that holds, and until when a script is taken to exist without a stat (-1: not a script)
     */
    private array $files = [];

    /** How long file() results are reused: PHP's realpath cache keeps a resolved symlink that long too. */
    private readonly int $filesTtl;

    /**
     * Seconds a script found on disk is run again without a stat: opcache.revalidate_freq when opcache is on
     * in this process (opcache runs a script's cached code that long without looking at the file either),
     * else 0 (a stat per request).
     */
    private readonly int $scriptTtl;

    /**
     * @var (\Closure(string): bool)|null whether opcache holds a script, when the caller said how; null: opcache's own
     *      opcache_is_script_cached(), called by name (with $opcache): through a closure of an internal function, the
     *      tracing JIT compiles no trace of resolve() or walk(), which then ran in the interpreter on every request
     */
    private readonly ?\Closure $cacheProbe;

    /** Whether a script can be held by opcache at all: a closure given, or opcache loaded in this process. */
    private readonly bool $opcache;

    /**
     * @param ?string $frontController URL path of the script that gets every path no file matches
     *                                 (`/index.php`, as WordPress and Laravel expect); null: 404 instead
     * @param list<string> $indexFiles tried in order for a directory
     * @param list<string> $scriptExtensions files run as scripts (case-sensitive, with the dot)
     * @param ?string $cgiBin directory served at `/cgi-bin/`: each executable file in it is a script
     * @param ?int $scriptTtl seconds a script found on disk is run again without a stat; null: opcache's
     *                        revalidate_freq when opcache is on in this process, else 0
     * @param (\Closure(string): bool)|null $isCached whether opcache holds a script (default opcache_is_script_cached())
     * @param SymlinkPolicy $symlinks which symlinks out of the root are followed (Inside: none)
     */
    public function __construct(
        string $root,
        private readonly ?string $frontController = '/index.php',
        private readonly array $indexFiles = ['index.php', 'index.html'],
        private readonly array $scriptExtensions = ['.php'],
        ?string $cgiBin = null,
        ?int $scriptTtl = null,
        ?\Closure $isCached = null,
        private readonly SymlinkPolicy $symlinks = SymlinkPolicy::Inside,
    ) {
        $this->root = self::realDirectory($root, 'Document root');
        $this->cgiBin = $cgiBin === null ? null : self::realDirectory($cgiBin, 'cgi-bin directory');
        $this->filesTtl = max(0, (int) ini_get('realpath_cache_ttl'));
        $this->cacheProbe = $isCached;
        $this->opcache = $isCached !== null || \function_exists('opcache_is_script_cached');
        $this->scriptTtl = $this->opcache ? min($this->filesTtl, max(0, $scriptTtl ?? OpcacheRevalidation::seconds())) : 0;
        if ($frontController !== null && (!str_starts_with($frontController, '/') || str_ends_with($frontController, '/')
            || \in_array('..', explode('/', $frontController), true))) {
            throw new \ValueError("Front controller must be a URL path to a file such as /index.php, got '$frontController'");
        }
        foreach ($scriptExtensions as $extension) {
            if (preg_match('/^\.[A-Za-z0-9_]+$/', $extension) !== 1) {
                throw new \ValueError("Script extension must be a dot and a name such as .php, got '$extension'");
            }
        }
    }

    public function root(): string
    {
        return $this->root;
    }

    /** URL path of the script that gets every path no file matches, null when none. */
    public function frontController(): ?string
    {
        return $this->frontController;
    }

    /**
     * @param string $query the raw query string, kept by a redirect
     * @param ?list<string> $indexFiles this request's index files instead of the constructor's (`DirectoryIndex`
     *                                  of an .htaccess file); [] for none. Names only: one with a `/` or a
     *                                  leading dot is skipped
     * @param bool $frontController whether a path no file matches goes to the front controller; false: 404
     *                              (the site declares its own 404s with `ErrorDocument 404` in .htaccess)
     */
    public function resolve(string $path, string $query = '', ?array $indexFiles = null, bool $frontController = true): Script|StaticFile|Redirect|Refusal
    {
        $known = $this->files[$path] ?? null;
        if ($known !== null && $known[2] > time() && $known[0] instanceof Script && $this->isCached($known[0]->realPath())) {
            return $known[0]; // a script found on disk less than scriptTtl seconds ago (walk()), still in opcache
        }
        $parsed = $this->parsed[$path] ?? $this->parse($path);
        if ($parsed instanceof Refusal) {
            return $parsed;
        }
        [$segments, $slash, $hidden] = $parsed;
        if ($this->cgiBin !== null && ($segments[0] ?? '') === 'cgi-bin') {
            clearstatcache();
            return $this->cgi($this->cgiBin, $segments, $slash, $hidden);
        }
        return $this->walk($path, $segments, $slash, $hidden, $query, $indexFiles ?? $this->indexFiles, $frontController);
    }

    /**
     * The path's segments (decoded, dot segments applied), whether it ends in a slash and where its first
     * hidden segment is (-1: none), or its refusal; remembered for the next request for it (the file system
     * is looked at again every time).
     *
     * @return array{list<string>, bool, int}|Refusal
     */
    private function parse(string $path): array|Refusal
    {
        if (\count($this->parsed) >= self::MAX_PARSED) {
            $this->parsed = []; // made-up paths must not grow the table without bound
        }
        return $this->parsed[$path] = self::segments($path);
    }

    /** @return array{list<string>, bool, int}|Refusal */
    private static function segments(string $path): array|Refusal
    {
        if ($path === '' || $path[0] !== '/') {
            return new Refusal(400, 'path must start with /');
        }
        if (preg_match('/%(?![0-9A-Fa-f]{2})|%2f|%5c|%00/i', $path) === 1) {
            return new Refusal(400, 'malformed percent-encoding, encoded slash or NUL');
        }
        $decoded = rawurldecode($path);
        if (preg_match('/[\x00-\x1F\x7F\\\\]/', $decoded) === 1) {
            return new Refusal(400, 'control byte or backslash');
        }
        $segments = [];
        $parts = explode('/', substr($decoded, 1));
        foreach ($parts as $part) {
            if ($part === '' || $part === '.') {
                continue;
            }
            if ($part === '..') {
                if ($segments === []) {
                    return new Refusal(400, 'path climbs above the root');
                }
                array_pop($segments);
                continue;
            }
            $segments[] = $part;
        }
        $last = $parts[\count($parts) - 1];
        $slash = $last === '' || $last === '.' || $last === '..';
        foreach ($segments as $i => $segment) {
            if ($segment[0] === '.' && ($i !== 0 || $segment !== '.well-known')) {
                return [$segments, $slash, $i];
            }
        }
        return [$segments, $slash, -1];
    }

    /**
     * A hidden segment (at $hidden, -1: none) is refused unless a script comes before it: then it is PATH_INFO.
     *
     * @param list<string> $segments
     * @param list<string> $indexFiles
     */
    private function walk(string $path, array $segments, bool $slash, int $hidden, string $query, array $indexFiles, bool $frontController): Script|StaticFile|Redirect|Refusal
    {
        $count = \count($segments);
        if ($count > 0 && !$slash && $hidden < 0) {
            // The common case: a file named as it is. What it is (script, static file, refusal) is what the last
            // request for the same path found (resolve() does not even look at a script found lately).
            $full = $this->root . '/' . implode('/', $segments);
            $known = $this->files[$path] ?? null;
            $now = time();
            clearstatcache(); // only before a look at the disk: the sequential tier keeps an entry of its own there
            if (is_file($full)) {
                if ($known !== null && $known[1] > $now) {
                    $this->files[$path][2] = $this->trustedUntil($known[0], $now);
                    return $known[0];
                }
                return $this->remember($path, $this->file($full, $segments, [], false), $now);
            }
        }
        if ($count === 0 || $slash) {
            clearstatcache();
        }
        $dir = $this->root;
        for ($i = 0; $i < $count; $i++) {
            if ($i === $hidden) {
                return new Refusal(404, 'hidden file');
            }
            $candidate = $dir . '/' . $segments[$i];
            if (is_dir($candidate)) {
                $dir = $candidate;
                continue;
            }
            $rest = \array_slice($segments, $i + 1);
            if (is_file($candidate)) {
                if ($hidden >= 0 && !$this->isScript($segments[$i])) {
                    return new Refusal(404, 'hidden file');
                }
                return $this->file($candidate, \array_slice($segments, 0, $i + 1), $rest, $slash, $frontController);
            }
            if (!str_ends_with($candidate, '.php') && \in_array('.php', $this->scriptExtensions, true) && is_file($candidate . '.php')) {
                $names = \array_slice($segments, 0, $i);
                $names[] = $segments[$i] . '.php';
                return $this->file($candidate . '.php', $names, $rest, $slash, $frontController);
            }
            return $hidden >= 0 ? new Refusal(404, 'hidden file') : $this->fallback($frontController);
        }
        return $this->directory($dir, $segments, $slash, $query, $indexFiles);
    }

    /**
     * Keeps what file() found for an existing file with no PATH_INFO (it depends on the file's path and the
     * symlinks on it only) for realpath_cache_ttl seconds, the time PHP's realpath() would give the same
     * answer; a script's existence for scriptTtl seconds.
     */
    private function remember(string $path, Script|StaticFile|Refusal $outcome, int $now): Script|StaticFile|Refusal
    {
        if ($this->filesTtl === 0) {
            return $outcome;
        }
        if (\count($this->files) >= self::MAX_PARSED) {
            $this->files = []; // bounded, as the parsed paths
        }
        $this->files[$path] = [$outcome, $now + $this->filesTtl, $this->trustedUntil($outcome, $now)];
        return $outcome;
    }

    /**
     * Until when (time()) a script is run again without a stat: only a script opcache holds, which runs from
     * opcache's copy whatever the disk says. Not a script, no opcache, or a script opcache does not keep
     * (blacklisted, too large, the cache full): -1, looked at every time.
     */
    private function trustedUntil(Script|StaticFile|Refusal $outcome, int $now): int
    {
        return $this->scriptTtl > 0 && $outcome instanceof Script && $this->isCached($outcome->realPath())
            ? $now + $this->scriptTtl : -1;
    }

    private function isCached(string $realPath): bool
    {
        if ($this->cacheProbe !== null) {
            return ($this->cacheProbe)($realPath);
        }
        return $this->opcache && \opcache_is_script_cached($realPath);
    }

    /**
     * @param list<string> $names URL path segments of the file
     * @param list<string> $rest segments after it (PATH_INFO for a script)
     */
    private function file(string $file, array $names, array $rest, bool $slash, bool $frontController = true): Script|StaticFile|Refusal
    {
        $real = realpath($file);
        if ($real === false) {
            return new Refusal(404, 'outside the document root');
        }
        $outside = !str_starts_with($real, $this->root . '/');
        if ($outside && ($why = $this->symlinks->refusal($this->root, $file, $real)) !== null) {
            return new Refusal(404, $why, true);
        }
        $name = $names[\count($names) - 1];
        if ($this->isScript($name)) {
            // The path as requested (a link stays a link), as Apache and nginx give SCRIPT_FILENAME.
            return new Script($file, '/' . implode('/', $names), self::pathInfo($rest, $slash), $this->root, realPath: $file === $real ? null : $real);
        }
        if ($rest !== [] || $slash) {
            return $this->fallback($frontController); // A file is not a directory.
        }
        if (preg_match(self::SOURCE, $name) === 1 || preg_match(self::SOURCE, $real) === 1) {
            return new Refusal(403, 'source file');
        }
        return new StaticFile($outside ? $file : $real);
    }

    /**
     * @param list<string> $segments
     * @param list<string> $indexFiles
     */
    private function directory(string $dir, array $segments, bool $slash, string $query, array $indexFiles): Script|StaticFile|Redirect|Refusal
    {
        $real = realpath($dir);
        if ($real === false) {
            return new Refusal(404, 'outside the document root');
        }
        if ($real !== $this->root && !str_starts_with($real, $this->root . '/') && ($why = $this->symlinks->refusal($this->root, $dir, $real)) !== null) {
            return new Refusal(404, $why, true);
        }
        if (!$slash && $segments !== []) {
            $location = '/' . implode('/', array_map('rawurlencode', $segments)) . '/';
            return new Redirect($query === '' ? $location : $location . '?' . $query);
        }
        foreach ($indexFiles as $index) {
            if ($index !== '' && $index[0] !== '.' && strpbrk($index, "/\0") === false && is_file($dir . '/' . $index)) {
                return $this->file($dir . '/' . $index, [...$segments, $index], [], false);
            }
        }
        return new Refusal(403, 'directory without an index file');
    }

    private function fallback(bool $frontController): Script|Refusal
    {
        if ($this->frontController === null || !$frontController) {
            return new Refusal(404, 'no such file');
        }
        $file = $this->root . $this->frontController;
        $real = realpath($file);
        if ($real === false || !is_file($real)) {
            return new Refusal(404, 'no such file, and no front controller');
        }
        if (!str_starts_with($real, $this->root . '/') && ($why = $this->symlinks->refusal($this->root, $file, $real)) !== null) {
            return new Refusal(404, "no such file, and the front controller is refused: $why", true);
        }
        return new Script($file, $this->frontController, '', $this->root, realPath: $file === $real ? null : $real);
    }

    /**
     * `/cgi-bin/NAME/rest`: NAME (maybe in a subdirectory: `/cgi-bin/tools/run.py/x`) must be an executable
     * file in the cgi-bin directory; no index, no extensionless, no front controller (Apache's ScriptAlias,
     * and the same rules as Cgi\CgiBinResolver). A hidden segment is refused unless it is the script's PATH_INFO.
     *
     * @param list<string> $segments
     */
    private function cgi(string $cgiBin, array $segments, bool $slash, int $hidden): Script|Refusal
    {
        $file = $cgiBin;
        $count = \count($segments);
        for ($i = 1; $i < $count; $i++) {
            if ($i === $hidden) {
                return new Refusal(404, 'hidden file');
            }
            $file .= '/' . $segments[$i];
            if (is_dir($file)) {
                continue;
            }
            $real = realpath($file);
            if ($real === false || !is_file($real)) {
                return new Refusal(404, 'no such CGI script');
            }
            if (!str_starts_with($real, $cgiBin . '/')) {
                return new Refusal(404, 'outside the cgi-bin directory');
            }
            if (!is_executable($real)) {
                return new Refusal(403, 'CGI script is not executable');
            }
            $name = '/' . implode('/', \array_slice($segments, 0, $i + 1));
            return new Script($real, $name, self::pathInfo(\array_slice($segments, $i + 1), $slash), $this->root);
        }
        return new Refusal(403, 'cgi-bin directories are not listed');
    }

    private function isScript(string $name): bool
    {
        foreach ($this->scriptExtensions as $extension) {
            if (str_ends_with($name, $extension) && \strlen($name) > \strlen($extension)) {
                return true;
            }
        }
        return false;
    }

    /** @param list<string> $rest */
    private static function pathInfo(array $rest, bool $slash): string
    {
        if ($rest === []) {
            return $slash ? '/' : '';
        }
        return '/' . implode('/', $rest) . ($slash ? '/' : '');
    }

    private static function realDirectory(string $path, string $what): string
    {
        $real = realpath($path);
        if ($real === false || !is_dir($real)) {
            throw new \ValueError("$what '$path' is not a directory");
        }
        return rtrim($real, '/');
    }
}
