<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * `.htaccess` rules written in app.php instead of in files (`$app->site(DIR, rules: ['/blog/' => "RewriteEngine On\n…"])`):
 * a file system that shows the given text as the start of each named directory's `.htaccess`, before what the
 * file on disk says (if there is one, and if the site reads them at all). Everything else is the real file system,
 * so the rules are parsed, cached and applied exactly as a file's, and reported under the directory's `.htaccess` path.
 */
final class ConfiguredRules implements Filesystem
{
    /** @var array<string, string> absolute path of `<dir>/.htaccess` => the configured text */
    private array $texts = [];

    /**
     * @param array<string, string> $rules URL directory path (`/`, `/blog/`) => rules in `.htaccess` syntax
     * @param bool $readFiles whether the `.htaccess` files on disk count too (`--no-htaccess` turns them off)
     */
    public function __construct(
        string $root,
        array $rules,
        private readonly bool $readFiles = true,
        private readonly Filesystem $files = new LocalFilesystem(),
        private readonly string $fileName = '.htaccess',
    ) {
        $root = rtrim($root, '/');
        foreach ($rules as $directory => $text) {
            $directory = (string) $directory;
            if (!str_starts_with($directory, '/') || \in_array('..', explode('/', $directory), true) || str_contains($directory, "\0")) {
                throw new \ValueError("site() rules: a directory is a URL path starting with / and without '..', got '$directory'");
            }
            $path = rtrim($root . '/' . trim($directory, '/'), '/') . '/' . $this->fileName;
            $this->texts[$path] = ($this->texts[$path] ?? '') . rtrim($text, "\n") . "\n";
        }
    }

    public function isFile(string $path): bool
    {
        return isset($this->texts[$path]) || ($this->allowed($path) && $this->files->isFile($path));
    }

    public function isDirectory(string $path): bool
    {
        return $this->files->isDirectory($path);
    }

    public function isLink(string $path): bool
    {
        return $this->files->isLink($path);
    }

    public function isExecutable(string $path): bool
    {
        return $this->files->isExecutable($path);
    }

    public function size(string $path): ?int
    {
        return $this->files->size($path);
    }

    public function stamp(string $path): ?string
    {
        $stamp = $this->allowed($path) ? $this->files->stamp($path) : null;
        if (!isset($this->texts[$path])) {
            return $stamp;
        }
        return 'app:' . md5($this->texts[$path]) . ($stamp === null ? '' : ":$stamp");
    }

    public function read(string $path): ?string
    {
        $file = $this->allowed($path) ? $this->files->read($path) : null;
        if (!isset($this->texts[$path])) {
            return $file;
        }
        return $this->texts[$path] . ($file ?? '');
    }

    /** Whether a path on disk may be read: anything but `.htaccess` files when the site does not read them. */
    private function allowed(string $path): bool
    {
        return $this->readFiles || basename($path) !== $this->fileName;
    }
}
