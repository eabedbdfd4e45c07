<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Site\OpcacheRevalidation;

/**
 * Makes opcache notice edited scripts in long-running processes, as it does under php-fpm.
 *
 * opcache checks a cached script's file (validate_timestamps) at most every `revalidate_freq` seconds,
 * counted from the start time of the request that checked it last. Under the CLI there is one request, as
 * long as the process: that time never moves, so after its first check a cached script is never checked
 * again and an edited file would keep running its old code. Workers forked from the supervisor share its
 * opcache and inherit its clock, so even a worker started after the edit (a replacement, a reload) would run
 * the old code.
 *
 * So every `revalidate_freq` seconds each script opcache holds but Kiln's own is handed to
 * opcache_invalidate($file, false), which drops it only when its file changed since it was compiled (or is
 * gone): the next include compiles the new one. That is every file a site's scripts included, inside the
 * document root or not (`../config.php`, `../src/…` beside a `public/` root), as php-fpm checks them all.
 * One stat per cached file every `revalidate_freq` seconds, instead of one per include under
 * `revalidate_freq=0`. Kiln's own files are left alone: a worker never includes them again.
 *
 * Who checks: the supervisor, for every process it forks (forWorkers(): workers and task workers share its
 * opcache), off the request path, whether a worker lives for one request or for a million; a reload checks
 * at once, before the new workers start. A process whose parent checks for it (forked after forWorkers())
 * gets null from forThisProcess(). A process with an opcache of its own (the fork tier's server, started by
 * exec) checks for itself, before it forks a script's child.
 *
 * @api reused by the fork tier and the supervisor
 */
final class CodeRevalidation
{
    /** Kiln's own tree (src/), whose files are not the site's. */
    private const KILN = __DIR__ . '/../../';

    /** Set in a process that checks for the processes it forks, and inherited by them (fork keeps statics). */
    private static bool $checkedByParent = false;

    private readonly string $kiln;

    /** When the next check is due (microtime); INF when only a reload checks. */
    private float $next;

    /** @param int $every seconds between checks; 0: none but checkNow() */
    private function __construct(private readonly int $every)
    {
        $this->next = $every > 0 ? microtime(true) + $every : INF;
        $this->kiln = (realpath(self::KILN) ?: self::KILN) . '/';
    }

    /**
     * Null when opcache is off in this process, does not check timestamps, or checks them at every include, and
     * when the parent this process was forked from checks the opcache they share (forWorkers()).
     */
    public static function forThisProcess(): ?self
    {
        $every = OpcacheRevalidation::seconds();
        return $every > 0 && !self::$checkedByParent ? new self($every) : null;
    }

    /**
     * The checks of the supervisor, for itself and every process it forks from now on (they share its opcache,
     * and their own forThisProcess() gives null); null when opcache is off here. Under
     * `opcache.validate_timestamps=0` (or `revalidate_freq=0`, where opcache checks at every include) there is no
     * periodic check, and checkNow() still drops what changed before a reload: with timestamps off, opcache drops
     * every script then (opcache_invalidate() does not compare them), so a reload compiles the code on disk, as a
     * php-fpm reload does.
     */
    public static function forWorkers(): ?self
    {
        if (!OpcacheRevalidation::enabled()) {
            return null;
        }
        self::$checkedByParent = true;
        return new self(OpcacheRevalidation::seconds());
    }

    /** Checks the cached files when the last check is `revalidate_freq` seconds old. */
    public function check(float $now): void
    {
        if ($now >= $this->next) {
            $this->checkNow($now);
        }
    }

    /** Checks now (a reload: the workers about to start must compile what is on disk), and again in `revalidate_freq`. */
    public function checkNow(float $now): void
    {
        $this->next = $this->every > 0 ? $now + $this->every : INF;
        $this->dropEdited();
    }

    private function dropEdited(): void
    {
        $status = opcache_get_status(true);
        $scripts = \is_array($status) && \is_array($status['scripts'] ?? null) ? $status['scripts'] : [];
        foreach ($scripts as $file => $_) {
            if (!str_starts_with((string) $file, $this->kiln)) {
                opcache_invalidate((string) $file, false);
            }
        }
    }
}
