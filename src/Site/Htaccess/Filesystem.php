<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * The file system as .htaccess handling sees it: a few stat()-like questions and reading one file.
 * Implementations MUST answer from the file system as it is now (no caching of their own: ConfigCache
 * decides how often to ask) and MUST NOT throw for a missing path: they answer false/null.
 */
interface Filesystem
{
    public function isFile(string $path): bool;

    public function isDirectory(string $path): bool;

    public function isLink(string $path): bool;

    public function isExecutable(string $path): bool;

    /** Size in bytes, null when not a file. */
    public function size(string $path): ?int;

    /**
     * A stamp that changes when the regular file at $path changes (modification time, size, inode), null
     * when there is no regular file there. One stat().
     */
    public function stamp(string $path): ?string;

    /** The file's contents, null when it cannot be read. */
    public function read(string $path): ?string;
}
