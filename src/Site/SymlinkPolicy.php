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

    /**
     * What to say at start-up when entries right in the document root are links this policy refuses (every
     * page of an app laid out as Debian installs it, `/var/lib/APP` → `/usr/share/APP`, would be a 404);
     * null when none is. Only the root's own entries are looked at: one lstat each.
     */
    public function startupWarning(string $root): ?string
    {
        if ($this === self::Follow) {
            return null;
        }
        $real = realpath($root);
        $entries = $real === false ? false : @scandir($real);
        if ($real === false || $entries === false) {
            return null;
        }
        $refused = [];
        foreach ($entries as $entry) {
            $path = "$real/$entry";
            if ($entry === '.' || $entry === '..' || !is_link($path)) {
                continue;
            }
            $target = realpath($path);
            if ($target !== false && $target !== $real && !str_starts_with($target, "$real/") && $this->refusal($real, $path, $target) !== null) {
                $refused[] = $entry;
            }
        }
        if ($refused === []) {
            return null;
        }
        sort($refused);
        $shown = implode(', ', \array_slice($refused, 0, 5)) . (\count($refused) > 5 ? ' and ' . (\count($refused) - 5) . ' more' : '');
        return \count($refused) . ' of the document root\'s entries are links out of it that --symlinks=' . $this->value . " refuses ($shown): "
            . 'each answers 404; --symlinks=owner serves a link whose owner is its target\'s (Debian\'s /var/lib/APP → /usr/share/APP), '
            . '--symlinks=follow every link (docs/configuration.md)';
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
