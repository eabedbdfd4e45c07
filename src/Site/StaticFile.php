<?php

declare(strict_types=1);

namespace Kiln\Site;

/** A request path resolved to a regular file under the document root, to be sent as it is. */
final class StaticFile
{
    public function __construct(
        /** Absolute, symlink-free path, under the document root and not a source file. */
        public readonly string $realPath,
    ) {}
}
