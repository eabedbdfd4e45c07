<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

use Kiln\Tests\Support\PeerProcess;

/**
 * A throwaway copy of an installed application, so a test never writes to /usr/share, /etc or /var/lib.
 * Symlinks are followed while copying (Debian links the apps' bundled libraries and its /etc and /var/lib
 * pieces into /usr/share/APP), so the copy is self-contained. Owned by www-data when the tests run as root,
 * as Apache's children run as www-data and write uploads, caches and pages.
 */
final class SiteCopy
{
    private function __construct(public readonly string $dir) {}

    /** Copies $source to a fresh temp dir; the copy's root is returned by root(). */
    public static function of(string $source, string $prefix): self
    {
        if (!is_dir($source)) {
            throw new \RuntimeException("$source is missing: run scripts/install-apps.sh");
        }
        $copy = new self(PeerProcess::tempDir($prefix));
        self::copyTree($source, $copy->root());
        return $copy;
    }

    public static function copyTree(string $from, string $to): void
    {
        exec('cp -rL ' . escapeshellarg($from) . ' ' . escapeshellarg($to) . ' 2>&1', $out, $code);
        if ($code !== 0) {
            throw new \RuntimeException("cp -rL $from $to failed: " . implode("\n", $out));
        }
    }

    public function root(): string
    {
        return "{$this->dir}/site";
    }

    public function write(string $relative, string $content): void
    {
        $path = $this->root() . '/' . $relative;
        if (!is_dir(\dirname($path))) {
            mkdir(\dirname($path), 0o755, true);
        }
        if (is_link($path)) {
            unlink($path);
        }
        file_put_contents($path, $content);
    }

    /** Hands the copy to www-data (when root), so that Apache's children can write where the app writes. */
    public function handToWebServer(): void
    {
        if (PeerProcess::isRoot()) {
            exec('chown -R www-data:www-data ' . escapeshellarg($this->root()), $out, $code);
            if ($code !== 0) {
                throw new \RuntimeException('chown failed: ' . implode("\n", $out));
            }
        }
    }

    public function remove(): void
    {
        PeerProcess::removeDir($this->dir);
    }
}
