<?php

declare(strict_types=1);

namespace Kiln\Site;

/**
 * How often opcache looks at a cached script's file in this process: `opcache.revalidate_freq` seconds
 * when opcache is on here and validates timestamps, else 0 (opcache off, never checking, or checking at
 * every include). Read by the path resolver (how long a script may go without a stat) and by the
 * sequential and fork tiers (how often they make opcache look, see Sequential\CodeRevalidation).
 */
final class OpcacheRevalidation
{
    public static function seconds(): int
    {
        if (!self::enabled() || !filter_var(ini_get('opcache.validate_timestamps'), \FILTER_VALIDATE_BOOL)) {
            return 0;
        }
        return max(0, (int) ini_get('opcache.revalidate_freq'));
    }

    /** Whether opcache caches scripts in this process (and its functions to look at the cache are there). */
    public static function enabled(): bool
    {
        $enabled = \PHP_SAPI === 'cli' ? 'opcache.enable_cli' : 'opcache.enable';
        return \function_exists('opcache_invalidate') && \function_exists('opcache_get_status')
            && filter_var(ini_get($enabled), \FILTER_VALIDATE_BOOL);
    }
}
