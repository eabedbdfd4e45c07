<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** The real file system, through PHP's stat functions with the stat cache cleared for each path asked about. */
final class LocalFilesystem implements Filesystem
{
    public function isFile(string $path): bool
    {
        clearstatcache(false, $path);
        return is_file($path);
    }

    public function isDirectory(string $path): bool
    {
        clearstatcache(false, $path);
        return is_dir($path);
    }

    public function isLink(string $path): bool
    {
        clearstatcache(false, $path);
        return is_link($path);
    }

    public function isExecutable(string $path): bool
    {
        clearstatcache(false, $path);
        return is_file($path) && is_executable($path);
    }

    public function size(string $path): ?int
    {
        clearstatcache(false, $path);
        $size = is_file($path) ? @filesize($path) : false;
        return $size === false ? null : $size;
    }

    public function stamp(string $path): ?string
    {
        clearstatcache(false, $path);
        $stat = @stat($path);
        if ($stat === false || ($stat['mode'] & 0o170000) !== 0o100000) {
            return null;
        }
        return $stat['mtime'] . ':' . $stat['size'] . ':' . $stat['ino'];
    }

    public function read(string $path): ?string
    {
        $text = @file_get_contents($path);
        return $text === false ? null : $text;
    }
}
