<?php

declare(strict_types=1);

namespace Kiln\Site;

/** A request path resolved to a regular file under the document root, to be sent as it is. */
final class StaticFile
{
    public function __construct(
        /**
         * Absolute path under the document root, not a source file: symlink-free, but when a symlink out of
         * the root that --symlinks allows is on the way, the path as requested (the file is opened through it).
         */
        public readonly string $realPath,
    ) {}
}
