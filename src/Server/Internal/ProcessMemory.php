<?php

declare(strict_types=1);

namespace Kiln\Server\Internal;

/**
 * @internal
 *
 * A process's proportional set size (PSS: its private pages plus its share of the pages it shares), as
 * smem reads it: the `Pss:` line of /proc/PID/smaps_rollup. Summed over processes that share memory
 * (php-cgi children and their opcache), it counts each shared page once.
 */
final class ProcessMemory
{
    /** @return int|null bytes; null when the process is gone or the kernel does not tell (not Linux) */
    public static function pss(int $pid): ?int
    {
        if ($pid <= 0) {
            return null;
        }
        $text = @file_get_contents("/proc/$pid/smaps_rollup");
        if ($text === false || preg_match('/^Pss:\s+(\d+) kB$/m', $text, $m) !== 1) {
            return null;
        }
        return (int) $m[1] * 1024;
    }

    /**
     * @param list<int> $pids
     * @return int|null bytes over the processes that could be read; null when none could
     */
    public static function pssTotal(array $pids): ?int
    {
        $total = null;
        foreach ($pids as $pid) {
            $pss = self::pss($pid);
            if ($pss !== null) {
                $total = ($total ?? 0) + $pss;
            }
        }
        return $total;
    }
}
