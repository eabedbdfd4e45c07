<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use Kiln\Site\Htaccess\Filesystem;

/** A file system in memory: files with contents (parent directories implied), extra directories, links; it counts what it is asked. */
final class FakeFilesystem implements Filesystem
{
    /** @var array<string, string> */
    private array $files = [];

    /** @var array<string, true> */
    private array $directories = [];

    /** @var array<string, int> path => version, bumped by each write */
    private array $versions = [];

    /** @var list<string> */
    public array $links = [];

    /** @var list<string> */
    public array $executables = [];

    /** @var list<string> files read() fails on */
    public array $unreadable = [];

    /** Calls that would be a stat() or a read(). */
    public int $calls = 0;

    /** @param array<string, string> $files absolute path => contents */
    public function __construct(array $files = [])
    {
        foreach ($files as $path => $contents) {
            $this->write($path, $contents);
        }
    }

    public function write(string $path, string $contents): void
    {
        $this->files[$path] = $contents;
        $this->versions[$path] = ($this->versions[$path] ?? 0) + 1;
        for ($dir = \dirname($path); $dir !== '/' && $dir !== '.'; $dir = \dirname($dir)) {
            $this->directories[$dir] = true;
        }
    }

    public function remove(string $path): void
    {
        unset($this->files[$path]);
    }

    public function mkdir(string $path): void
    {
        $this->directories[$path] = true;
    }

    public function isFile(string $path): bool
    {
        $path = self::clean($path);
        $this->calls++;
        return isset($this->files[$path]);
    }

    public function isDirectory(string $path): bool
    {
        $path = self::clean($path);
        $this->calls++;
        return isset($this->directories[rtrim($path, '/')]);
    }

    public function isLink(string $path): bool
    {
        $path = self::clean($path);
        $this->calls++;
        return \in_array($path, $this->links, true);
    }

    public function isExecutable(string $path): bool
    {
        $path = self::clean($path);
        $this->calls++;
        return \in_array($path, $this->executables, true);
    }

    public function size(string $path): ?int
    {
        $path = self::clean($path);
        $this->calls++;
        return isset($this->files[$path]) ? \strlen($this->files[$path]) : null;
    }

    public function stamp(string $path): ?string
    {
        $path = self::clean($path);
        $this->calls++;
        return isset($this->files[$path]) ? (string) $this->versions[$path] : null;
    }

    public function read(string $path): ?string
    {
        $path = self::clean($path);
        $this->calls++;
        return \in_array($path, $this->unreadable, true) ? null : ($this->files[$path] ?? null);
    }

    /** As a real file system: repeated slashes are one. */
    private static function clean(string $path): string
    {
        return (string) preg_replace('~/{2,}~', '/', $path);
    }
}
