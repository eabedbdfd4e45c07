<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

/**
 * Binary min-heap of timers ordered by (expiration, insertion order), with lazy cancellation:
 * remove() only invalidates the watcher's token, and stale entries are skipped when they surface.
 * The heap is compacted when stale entries outnumber live ones, so many cancelled long timeouts
 * (the common case: a per-request timeout that never fires) do not grow it without bound.
 *
 * Parallel arrays instead of entry objects: no allocation per insert beyond array growth.
 *
 * @internal
 */
final class TimerQueue
{
    /** @var array<int, int> */
    private array $exp = [];
    /** @var array<int, int> */
    private array $seq = [];
    /** @var array<int, Watcher> */
    private array $items = [];
    private int $size = 0;
    private int $live = 0;
    private int $nextSeq = 1;

    public function insert(Watcher $watcher): void
    {
        if ($watcher->timerSeq !== 0) {
            $this->remove($watcher);
        }
        $watcher->timerSeq = $this->nextSeq++;
        $this->live++;
        $i = $this->size++;
        $this->exp[$i] = $watcher->expiration;
        $this->seq[$i] = $watcher->timerSeq;
        $this->items[$i] = $watcher;
        $this->siftUp($i);
    }

    public function remove(Watcher $watcher): void
    {
        if ($watcher->timerSeq === 0) {
            return;
        }
        $watcher->timerSeq = 0;
        $this->live--;
        if ($this->size > 1024 && $this->size > 2 * $this->live) {
            $this->compact();
        }
    }

    /** Expiration (hrtime ns) of the earliest live timer, or null when there is none. */
    public function peek(): ?int
    {
        while ($this->size > 0) {
            if ($this->items[0]->timerSeq === $this->seq[0]) {
                return $this->exp[0];
            }
            $this->pop();
        }

        return null;
    }

    /** Removes and returns the earliest live timer due at or before $now, or null. */
    public function extractDue(int $now): ?Watcher
    {
        while ($this->size > 0) {
            $watcher = $this->items[0];
            if ($watcher->timerSeq !== $this->seq[0]) {
                $this->pop();
                continue;
            }
            if ($this->exp[0] > $now) {
                return null;
            }
            $this->pop();
            $watcher->timerSeq = 0;
            $this->live--;

            return $watcher;
        }

        return null;
    }

    public function count(): int
    {
        return $this->live;
    }

    private function pop(): void
    {
        $last = --$this->size;
        if ($last > 0) {
            $this->exp[0] = $this->exp[$last];
            $this->seq[0] = $this->seq[$last];
            $this->items[0] = $this->items[$last];
        }
        unset($this->exp[$last], $this->seq[$last], $this->items[$last]);
        if ($last > 1) {
            $this->siftDown(0);
        }
    }

    private function compact(): void
    {
        $exp = $seq = $items = [];
        for ($i = 0; $i < $this->size; $i++) {
            if ($this->items[$i]->timerSeq === $this->seq[$i]) {
                $exp[] = $this->exp[$i];
                $seq[] = $this->seq[$i];
                $items[] = $this->items[$i];
            }
        }
        [$this->exp, $this->seq, $this->items, $this->size] = [$exp, $seq, $items, \count($items)];
        for ($i = ($this->size >> 1) - 1; $i >= 0; $i--) {
            $this->siftDown($i);
        }
    }

    private function less(int $a, int $b): bool
    {
        return $this->exp[$a] < $this->exp[$b]
            || ($this->exp[$a] === $this->exp[$b] && $this->seq[$a] < $this->seq[$b]);
    }

    private function siftUp(int $i): void
    {
        while ($i > 0) {
            $parent = ($i - 1) >> 1;
            if (!$this->less($i, $parent)) {
                return;
            }
            $this->swap($i, $parent);
            $i = $parent;
        }
    }

    private function siftDown(int $i): void
    {
        while (($child = 2 * $i + 1) < $this->size) {
            if ($child + 1 < $this->size && $this->less($child + 1, $child)) {
                $child++;
            }
            if (!$this->less($child, $i)) {
                return;
            }
            $this->swap($i, $child);
            $i = $child;
        }
    }

    private function swap(int $a, int $b): void
    {
        [$this->exp[$a], $this->exp[$b]] = [$this->exp[$b], $this->exp[$a]];
        [$this->seq[$a], $this->seq[$b]] = [$this->seq[$b], $this->seq[$a]];
        [$this->items[$a], $this->items[$b]] = [$this->items[$b], $this->items[$a]];
    }
}
