<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

/**
 * Answers read from a file's source, kept per path and modification time. An answer is trusted for 2 s (opcache's
 * default revalidate_freq), then the file's modification time is looked at again, and the source read again only
 * when it changed. Bounded: emptied past 10,000 files (a site has a bounded number).
 *
 * @template T
 */
final class FileAnswers
{
    private const MAX = 10_000;
    private const REVALIDATE = 2.0;

    /** @var array<string, array{int, T, float}> path => [mtime, answer, when the mtime was read] */
    private array $cache = [];

    /**
     * @param \Closure(string): T $read the answer for a file's source
     * @param T $unreadable the answer for a file that cannot be read (not cached)
     */
    public function __construct(
        private readonly \Closure $read,
        private readonly mixed $unreadable,
    ) {}

    /** @return T */
    public function of(string $path): mixed
    {
        $now = microtime(true);
        $cached = $this->cache[$path] ?? null;
        if ($cached !== null && $now - $cached[2] < self::REVALIDATE) {
            return $cached[1];
        }
        clearstatcache(true, $path);
        $mtime = @filemtime($path);
        if ($mtime === false) {
            return $this->unreadable;
        }
        if ($cached !== null && $cached[0] === $mtime) {
            $this->cache[$path][2] = $now;
            return $cached[1];
        }
        $source = @file_get_contents($path);
        if ($source === false) {
            return $this->unreadable;
        }
        if (\count($this->cache) >= self::MAX) {
            $this->cache = [];
        }
        $answer = ($this->read)($source);
        $this->cache[$path] = [$mtime, $answer, $now];
        return $answer;
    }
}
