<?php

declare(strict_types=1);

namespace Kiln\Server\Internal;

/**
 * @internal
 *
 * A process's children as Linux lists them (/proc/PID/task/TID/children, one file per thread); none where /proc
 * does not say (another system, or a process gone).
 */
final class ProcessTree
{
    /** @return list<int> the pids of $pid's children now */
    public static function children(int $pid): array
    {
        $children = [];
        foreach (glob("/proc/$pid/task/*/children") ?: [] as $file) {
            foreach (preg_split('/\s+/', trim((string) @file_get_contents($file))) ?: [] as $child) {
                if (ctype_digit($child)) {
                    $children[] = (int) $child;
                }
            }
        }
        return $children;
    }
}
