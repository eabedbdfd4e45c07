<?php

declare(strict_types=1);

namespace Kiln\Cli;

/**
 * What `kiln serve PATH` serves, resolved to an absolute path: an app script (a .php file, or a
 * directory's app.php) or a document root (a directory, or its public/ when it has one).
 */
final class Target
{
    public const SCRIPT = 'script';
    public const DOCROOT = 'docroot';

    public function __construct(
        public readonly string $path,
        public readonly string $kind,
    ) {
        if ($kind !== self::SCRIPT && $kind !== self::DOCROOT) {
            throw new \ValueError("Target kind must be 'script' or 'docroot', got '$kind'");
        }
    }

    /** @throws UsageException when PATH is not something Kiln can serve */
    public static function resolve(string $path, string $cwd): self
    {
        if ($path === '') {
            throw new UsageException('PATH is empty: give an app script (app.php), a directory holding app.php, or a document root');
        }
        $absolute = str_starts_with($path, '/') ? $path : rtrim($cwd, '/') . '/' . $path;
        $real = realpath($absolute);
        if ($real === false) {
            throw new UsageException("PATH $path does not exist: give an app script (app.php), a directory holding app.php, or a document root");
        }
        if (is_file($real)) {
            if (strtolower(pathinfo($real, PATHINFO_EXTENSION)) !== 'php') {
                throw new UsageException("PATH $path is not a .php script: give an app script, a directory holding app.php, or a document root");
            }
            return new self($real, self::SCRIPT);
        }
        if (!is_dir($real)) {
            throw new UsageException("PATH $path is neither a file nor a directory");
        }
        if (is_file("$real/app.php")) {
            return new self("$real/app.php", self::SCRIPT);
        }
        if (is_dir("$real/public")) {
            return new self("$real/public", self::DOCROOT);
        }
        return new self($real, self::DOCROOT);
    }
}
