<?php

declare(strict_types=1);

namespace Kiln\Server\Internal;

use Kiln\Server\Log;

/**
 * @internal
 *
 * The orphans given to the supervisor (the child subreaper, or PID 1) that still run when the server has stopped:
 * a fork server's child finishing its request, a process a request started in the background (`nohup ... &`).
 * They end with the server as a worker does: SIGTERM, up to GRACE for all of them to exit, then SIGKILL for those
 * left; each is reaped, and no wait is longer than that (docs/deploy.md, docs/design/029-process-hygiene.md).
 */
final class AdoptedProcesses
{
    /** How long the adopted processes still running have, all together, to exit on SIGTERM; then as long to be reaped. */
    public const GRACE = 2.0;

    /** Ends the children of $self (the calling process, once its own children are all reaped). */
    public static function end(int $self, Log $log, float $grace = self::GRACE): void
    {
        $left = array_fill_keys(ProcessTree::children($self), true);
        if ($left === []) {
            return;
        }
        $log->debug('adopted process(es) ' . implode(', ', array_keys($left)) . ' still running: SIGTERM');
        foreach (array_keys($left) as $pid) {
            @posix_kill($pid, SIGTERM);
        }
        $left = self::reap($left, microtime(true) + $grace);
        if ($left === []) {
            return;
        }
        $log->debug('adopted process(es) ' . implode(', ', array_keys($left)) . ' still running after SIGTERM: SIGKILL');
        foreach (array_keys($left) as $pid) {
            @posix_kill($pid, SIGKILL);
        }
        $left = self::reap($left, microtime(true) + $grace);
        if ($left !== []) {
            $log->warning('adopted process(es) ' . implode(', ', array_keys($left)) . ' not ended by SIGKILL: left to PID 1');
        }
    }

    /**
     * @param array<int, true> $left
     * @return array<int, true> those not reaped by $deadline
     */
    private static function reap(array $left, float $deadline): array
    {
        $status = 0;
        while (true) {
            foreach (array_keys($left) as $pid) {
                $done = pcntl_waitpid($pid, $status, WNOHANG);
                if ($done === $pid || $done === -1) {
                    unset($left[$pid]); // -1: not (or no longer) a child of this process
                }
            }
            if ($left === [] || microtime(true) >= $deadline) {
                return $left;
            }
            usleep(20_000);
        }
    }
}
