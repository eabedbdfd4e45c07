<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * How many connections each worker accepted lately, in a small shared-memory table, so that workers
 * sharing one listening socket spread a burst of new connections between them.
 *
 * Without it the first worker to wake takes a whole burst: wrk's 16 connections often all landed on one
 * worker, and with the sequential or isolated tier the other worker then sat idle for the life of those
 * keep-alive connections (half the throughput). With it, a worker that accepted at least two more
 * connections lately, and half as many again, as the least busy live worker lets that one take the
 * next connection. Under a steady stream of short connections the counts stay close and nobody yields.
 *
 * "Lately" is a count that decays to 1/e in a quarter of a second. Open connections would be the obvious
 * measure, but a worker learns that a client closed only when it next reads: right after a load run,
 * the worker still holding the old run's dead connections would get none of the next run's.
 *
 * One row per worker slot (1 … workers): the pid that last wrote it, its count and when. The supervisor
 * creates the table before forking; it is removed when the last process detaches, so a crash leaves
 * nothing behind. Needs the shmop extension; without it, or with one worker, there is no table and
 * workers accept as they wake. A worker's pid is checked before anyone yields to it, so a worker that
 * died without withdrawing is ignored.
 */
final class AcceptBalance
{
    /** pid (int32, 4 bytes padding), count (double), when, in seconds of the monotonic clock (double) */
    private const ROW = 24;

    /** Seconds for a count to fall to 1/e. */
    private const DECAY = 0.25;

    private const MARGIN = 2.0;

    private const RATIO = 1.5;

    private int $pid = 0;

    private float $count = 0.0;

    private float $countAt = 0.0;

    private function __construct(
        private readonly \Shmop $memory,
        private readonly int $slots,
    ) {}

    /** null when there is nothing to balance (one slot) or no shared memory (shmop missing or refused) */
    public static function create(int $slots): ?self
    {
        if ($slots < 2 || !\function_exists('shmop_open')) {
            return null;
        }
        $memory = @shmop_open(0, 'c', 0600, $slots * self::ROW);
        if ($memory === false) {
            return null;
        }
        // Marked for removal now: it lives while attached (the supervisor and every forked worker).
        shmop_delete($memory);
        return new self($memory, $slots);
    }

    /** The worker in $slot takes part, with nothing accepted yet. */
    public function join(int $slot): void
    {
        $this->pid = getmypid() ?: -1;
        $this->count = 0.0;
        $this->countAt = self::now();
        $this->write($slot);
    }

    /** The worker in $slot accepted a connection. */
    public function accepted(int $slot): void
    {
        if ($this->pid === 0) {
            return;
        }
        $now = self::now();
        $this->count = $this->count * exp(($this->countAt - $now) / self::DECAY) + 1.0;
        $this->countAt = $now;
        $this->write($slot);
    }

    /** The worker in $slot stops accepting: its row is cleared, unless a successor in the slot wrote it since. */
    public function withdraw(int $slot): void
    {
        if ($this->pid === 0 || $slot < 1 || $slot > $this->slots) {
            return;
        }
        $row = unpack('lpid', shmop_read($this->memory, ($slot - 1) * self::ROW, 4));
        if ($row !== false && $row['pid'] === $this->pid) {
            shmop_write($this->memory, pack('lx4dd', 0, 0.0, 0.0), ($slot - 1) * self::ROW);
        }
        $this->pid = 0;
    }

    /** Whether the worker in $slot should leave the next connection to a live sibling that accepted fewer lately. */
    public function shouldYield(int $slot): bool
    {
        if ($this->pid === 0) {
            return false;
        }
        $now = self::now();
        $least = INF;
        $leastPid = 0;
        foreach ($this->siblings($slot) as [$pid, $count, $at]) {
            $count *= exp(min(0.0, $at - $now) / self::DECAY);
            if ($count < $least) {
                $least = $count;
                $leastPid = $pid;
            }
        }
        $mine = $this->count * exp(($this->countAt - $now) / self::DECAY);
        return $leastPid !== 0 && $mine >= $least + self::MARGIN && $mine >= $least * self::RATIO
            && posix_kill($leastPid, 0);
    }

    /** When a live sibling of the worker in $slot last accepted (monotonic seconds; 0.0 if none did). */
    public function siblingsLastAccepted(int $slot): float
    {
        $last = 0.0;
        foreach ($this->siblings($slot) as [, , $at]) {
            $last = max($last, $at);
        }
        return $last;
    }

    /** @return list<array{int, float, float}> pid, count and when, of the other rows in use */
    private function siblings(int $slot): array
    {
        $table = shmop_read($this->memory, 0, $this->slots * self::ROW);
        $siblings = [];
        for ($other = 1; $other <= $this->slots; $other++) {
            $row = unpack('lpid/x4/dcount/dat', $table, ($other - 1) * self::ROW);
            $pid = $row['pid'] ?? 0;
            $count = $row['count'] ?? 0.0;
            $at = $row['at'] ?? 0.0;
            if ($other !== $slot && \is_int($pid) && $pid > 0 && $pid !== $this->pid && \is_float($count) && \is_float($at)) {
                $siblings[] = [$pid, $count, $at];
            }
        }
        return $siblings;
    }

    private function write(int $slot): void
    {
        if ($slot >= 1 && $slot <= $this->slots) {
            shmop_write($this->memory, pack('lx4dd', $this->pid, $this->count, $this->countAt), ($slot - 1) * self::ROW);
        }
    }

    private static function now(): float
    {
        return hrtime(true) / 1e9;
    }
}
