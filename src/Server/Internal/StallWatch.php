<?php

declare(strict_types=1);

namespace Kiln\Server\Internal;

/**
 * The supervisor's bookkeeping of worker heartbeats (docs/design/028), sans I/O: it is told when a worker
 * was heard from and what time it is, and answers which workers to report and which to end.
 *
 * A watched worker not heard from for the timeout is reported once (Stalled), and ended (Kill) at twice
 * the timeout unless heard from again first (then heard() says for how long it stood still). Time the
 * supervisor itself did not run (its process stopped, the host suspended) is forgiven: a gap between two
 * checks longer than STOPPED seconds (the supervisor checks at least twice a second) and half the timeout
 * moves every worker's last beat forward by that gap, since the workers were most likely stopped as long.
 *
 * @internal
 */
final class StallWatch
{
    private const STOPPED = 2.0;

    /** @var array<int, float> when each watched worker was last heard from, by pid */
    private array $heard = [];

    /** @var array<int, float> workers reported stalled, with when they were last heard from */
    private array $stalled = [];

    private float $checked = -INF;

    public function __construct(public readonly float $timeout)
    {
        if (!($timeout > 0) || !is_finite($timeout)) {
            throw new \ValueError("A stall timeout must be a positive number of seconds, got $timeout");
        }
    }

    /** Starts watching a worker (its loop runs from now: it said it is ready). */
    public function watch(int $pid, float $now): void
    {
        $this->heard[$pid] = $now;
    }

    /**
     * The worker said something: its loop turned. Returns for how long it had stood still when it had been
     * reported stalled (it came back), else null.
     */
    public function heard(int $pid, float $now): ?float
    {
        if (!isset($this->heard[$pid])) {
            return null;
        }
        $this->heard[$pid] = $now;
        $since = $this->stalled[$pid] ?? null;
        unset($this->stalled[$pid]);
        return $since === null ? null : $now - $since;
    }

    public function forget(int $pid): void
    {
        unset($this->heard[$pid], $this->stalled[$pid]);
    }

    /**
     * What is due now: each worker newly stalled (reported once), and each to end.
     *
     * @return list<array{int, StallVerdict, float}> pid, verdict, seconds since it was last heard from
     */
    public function check(float $now): array
    {
        $gap = $now - $this->checked;
        $this->checked = $now;
        if ($gap > max(self::STOPPED, $this->timeout / 2) && is_finite($gap)) {
            foreach ($this->heard as $pid => $at) {
                $this->heard[$pid] = min($now, $at + $gap);
            }
        }
        $due = [];
        foreach ($this->heard as $pid => $at) {
            $silent = $now - $at;
            if ($silent >= 2 * $this->timeout) {
                $due[] = [$pid, StallVerdict::Kill, $silent];
                unset($this->heard[$pid], $this->stalled[$pid]); // ended: asked once
            } elseif ($silent >= $this->timeout && !isset($this->stalled[$pid])) {
                $this->stalled[$pid] = $at;
                $due[] = [$pid, StallVerdict::Stalled, $silent];
            }
        }
        return $due;
    }

    /** Seconds the worker has stood still, if it is reported stalled; null otherwise. */
    public function stalledFor(int $pid, float $now): ?float
    {
        return isset($this->stalled[$pid]) ? $now - $this->stalled[$pid] : null;
    }

    /** When check() may next have something to say. */
    public function nextCheckAt(): float
    {
        $next = INF;
        foreach ($this->heard as $pid => $at) {
            $next = min($next, $at + (isset($this->stalled[$pid]) ? 2 : 1) * $this->timeout);
        }
        return $next;
    }
}
