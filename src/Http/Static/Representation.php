<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * One representation of a static file chosen for a request: the file itself, a precompressed sibling
 * (FILE.br, FILE.gz), or the file gzipped on the fly. Each has its own entity tag, so caches and
 * conditional requests never mix them up.
 *
 * @internal
 */
final class Representation
{
    /**
     * @param ?string $encoding the Content-Encoding, null for identity
     * @param bool $onTheFly compressed while sent: no known length, no ranges
     */
    public function __construct(
        public readonly string $path,
        public readonly int $size,
        public readonly int $mtime,
        public readonly ?string $encoding,
        public readonly bool $onTheFly = false,
    ) {}

    /**
     * `"mtime-size"` in hex (nginx's form) for the file, with `-br` / `-gzip` for a precompressed
     * sibling (its own mtime and size); weak for on-the-fly gzip, whose bytes depend on zlib and the
     * level, not on the file alone.
     */
    public function etag(): string
    {
        $tag = dechex($this->mtime) . '-' . dechex($this->size) . ($this->encoding === null ? '' : '-' . $this->encoding);
        return $this->onTheFly ? 'W/"' . $tag . '"' : '"' . $tag . '"';
    }

    public function lastModified(): string
    {
        return HttpDate::format($this->mtime);
    }

    public function rangeable(): bool
    {
        return !$this->onTheFly;
    }
}
