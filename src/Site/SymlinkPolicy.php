<?php

declare(strict_types=1);

namespace Kiln\Site;

/**
 * Which symbolic links a document root follows out of itself (`--symlinks`), after Apache's `Options`:
 * a link whose target stays under the root is followed in every case. docs/design/019.
 */
enum SymlinkPolicy: string
{
    /** Only links whose target stays under the document root (the default). */
    case Inside = 'inside';

    /** Apache's SymLinksIfOwnerMatch: a link out of the root when it and its target have the same owner. */
    case OwnerMatch = 'owner';

    /** Apache's FollowSymLinks: every link. */
    case Follow = 'follow';

    /** @throws \ValueError */
    public static function fromOption(string $value): self
    {
        return self::tryFrom($value) ?? throw new \ValueError("--symlinks must be inside, owner or follow, got '$value'");
    }

    /**
     * Why the file at $path (absolute, under $root as written, maybe through links) may not be served,
     * whose real path $real is outside the root; null when this policy lets it through.
     */
    public function refusal(string $root, string $path, string $real): ?string
    {
        if ($this === self::Follow) {
            return null;
        }
        $link = self::firstLinkOut($root, $path);
        $shown = $link ?? $path;
        if ($this === self::Inside || $link === null) {
            return "symlink $shown leads out of the document root to $real (--symlinks=inside, the default; --symlinks=owner or follow would serve it)";
        }
        // Every link on the way must be owned by its target's owner, as Apache checks each one.
        $dir = $root;
        foreach (explode('/', substr($path, \strlen($root) + 1)) as $segment) {
            $dir .= '/' . $segment;
            if (!is_link($dir)) {
                continue;
            }
            $stat = @lstat($dir);
            $linkOwner = $stat === false ? -1 : $stat['uid'];
            $targetOwner = @fileowner($dir);
            $targetOwner = $targetOwner === false ? -2 : $targetOwner;
            if ($linkOwner !== $targetOwner) {
                return "symlink $dir (owner uid $linkOwner) points to " . (realpath($dir) ?: '?') . " (owner uid $targetOwner): "
                    . '--symlinks=owner follows a link out of the document root only when both have the same owner';
            }
        }
        return null;
    }

    /** The first link on $path, under $root, or null when none is (the file was moved or the root changed). */
    private static function firstLinkOut(string $root, string $path): ?string
    {
        $dir = $root;
        foreach (explode('/', substr($path, \strlen($root) + 1)) as $segment) {
            $dir .= '/' . $segment;
            if (is_link($dir)) {
                return $dir;
            }
        }
        return null;
    }
}
