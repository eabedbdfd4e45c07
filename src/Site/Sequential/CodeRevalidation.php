<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Site\OpcacheRevalidation;

/**
 * Makes opcache notice edited scripts in a long-running worker, as it does under php-fpm.
 *
 * opcache checks a cached script's file (validate_timestamps) at most every `revalidate_freq` seconds,
 * counted from the start time of the request that checked it last. Under the CLI there is one request, as
 * long as the process: that time never moves, so after its first check a cached script is never checked
 * again and an edited file would keep running its old code until the worker ends.
 *
 * So every `revalidate_freq` seconds, before a script runs, each script opcache holds but Kiln's own is
 * handed to opcache_invalidate($file, false), which drops it only when its file changed since it was
 * compiled (or is gone): the next include compiles the new one. That is every file a site's scripts
 * included, inside the document root or not (`../config.php`, `../src/…` beside a `public/` root), as
 * php-fpm checks them all. One stat per cached file every `revalidate_freq` seconds, instead of one per
 * include under `revalidate_freq=0`. Kiln's own files are left alone: a worker never includes them again.
 *
 * @api reused by the fork tier
 */
final class CodeRevalidation
{
    /** Kiln's own tree (src/), whose files are not the site's. */
    private const KILN = __DIR__ . '/../../';

    private readonly string $kiln;

    /** When the next check is due (microtime). */
    private float $next;

    private function __construct(private readonly int $every)
    {
        $this->next = microtime(true) + $every;
        $this->kiln = (realpath(self::KILN) ?: self::KILN) . '/';
    }

    /** Null when opcache is off in this process, does not check timestamps, or checks them at every include. */
    public static function forThisProcess(): ?self
    {
        $every = OpcacheRevalidation::seconds();
        return $every > 0 ? new self($every) : null;
    }

    /** Checks the site's cached files when the last check is `revalidate_freq` seconds old. */
    public function check(float $now): void
    {
        if ($now < $this->next) {
            return;
        }
        $this->next = $now + $this->every;
        $status = opcache_get_status(true);
        $scripts = \is_array($status) && \is_array($status['scripts'] ?? null) ? $status['scripts'] : [];
        foreach ($scripts as $file => $_) {
            if (!str_starts_with((string) $file, $this->kiln)) {
                opcache_invalidate((string) $file, false);
            }
        }
    }
}
