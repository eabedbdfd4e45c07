<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * The knobs of static file serving, with conservative defaults:
 *
 *     new StaticFiles($root, new StaticOptions(
 *         cache: CachePolicy::none()->withPrefix('/build/', 'public, max-age=31536000, immutable'),
 *         gzipLevel: 4,
 *     ));
 *
 * - cache: Cache-Control by path prefix / extension (default: none sent).
 * - index: file names tried, in order, for a directory (default index.html; index.php is the
 *   document root layer's business, never served as a file here).
 * - maxRanges: most ranges served in one multipart/byteranges reply after coalescing; past it, 200.
 * - precompressed: serve `FILE.br` / `FILE.gz` next to FILE to clients that accept them.
 * - gzip: compress compressible types on the fly, between gzipMinSize and gzipMaxSize bytes
 *   (smaller: not worth a chunked reply; larger: CPU better spent elsewhere, precompress those).
 */
final class StaticOptions
{
    /**
     * @param list<string> $index
     */
    public function __construct(
        public readonly CachePolicy $cache = new CachePolicy(),
        public readonly array $index = ['index.html'],
        public readonly int $maxRanges = 32,
        public readonly bool $precompressed = true,
        public readonly bool $gzip = true,
        public readonly int $gzipMinSize = 1024,
        public readonly int $gzipMaxSize = 16 << 20,
        public readonly int $gzipLevel = 6,
    ) {
        foreach ($index as $name) {
            if ($name === '' || str_contains($name, '/') || $name[0] === '.' || preg_match(PathGuard::SOURCE, $name) === 1) {
                throw new \ValueError("An index name is a plain file name that is not a PHP source, like 'index.html', got '$name'");
            }
        }
        if ($maxRanges < 1) {
            throw new \ValueError("maxRanges must be at least 1, got $maxRanges");
        }
        if ($gzipMinSize < 0 || $gzipMaxSize < $gzipMinSize) {
            throw new \ValueError("Need 0 <= gzipMinSize <= gzipMaxSize, got $gzipMinSize and $gzipMaxSize");
        }
        if ($gzipLevel < 1 || $gzipLevel > 9) {
            throw new \ValueError("gzipLevel is 1 (fastest) to 9 (smallest), got $gzipLevel");
        }
    }
}
