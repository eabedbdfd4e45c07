<?php

declare(strict_types=1);

namespace Kiln\Loop;

/**
 * The accounting of a pool of reusable objects per key (e.g. connections per address), at most $max open
 * per key: which are idle (oldest first), how many are open, which are taken, and who waits for a turn.
 * It opens, checks, closes and times nothing itself: its owner does, and decides what waiting means.
 *
 * - Every object taken (from idle, or just opened) ends in exactly one putBack() or remove(); a second
 *   call returns false and changes nothing.
 * - After a putBack() or remove() that returned true, the owner calls wakeOne() once the object is in
 *   order (a waiter resumed from a loop callback runs at once, inside wakeOne()).
 * - A key with nothing open, idle or waiting is forgotten.
 *
 * @internal for the HTTP and FastCGI connection pools
 *
 * @template T of object
 */
final class KeyedPool
{
    /** @var array<string, list<T>> */
    private array $idle = [];
    /** @var array<string, int> */
    private array $open = [];
    /** @var array<int, true> spl_object_id of every object counted in $open and not idle */
    private array $taken = [];
    /** @var array<string, Fifo<\Closure(): bool>> */
    private array $waiting = [];
    /** The first id of a key's next queue of waiters: ids are never given twice, even after a key was forgotten. */
    private int $nextWaiter = 0;
    private int $opened = 0;

    public function __construct(public readonly int $max) {}

    /**
     * The most (or least) recently used idle object of $key, now taken; null if there is none.
     *
     * @return T|null
     */
    public function takeIdle(string $key, bool $newest = true): ?object
    {
        if (!isset($this->idle[$key]) || $this->idle[$key] === []) {
            return null;
        }
        $item = $newest ? \array_pop($this->idle[$key]) : \array_shift($this->idle[$key]);
        $this->taken[\spl_object_id($item)] = true;

        return $item;
    }

    /**
     * $item, idle under $key, now taken (e.g. to close it when its idle time is up); false if it was not idle.
     *
     * @param T $item
     */
    public function take(string $key, object $item): bool
    {
        $idle = $this->idle[$key] ?? [];
        $index = \array_search($item, $idle, true);
        if ($index === false) {
            return false;
        }
        unset($idle[$index]);
        $this->idle[$key] = \array_values($idle);
        $this->taken[\spl_object_id($item)] = true;

        return true;
    }

    /**
     * The least recently used idle object of $key, left idle.
     *
     * @return T|null
     */
    public function oldestIdle(string $key): ?object
    {
        return $this->idle[$key][0] ?? null;
    }

    /**
     * A new object for $key from $open, now taken, unless $max are open already (null). If $open throws,
     * the slot it held is given to the next waiter.
     *
     * @param \Closure(): T $open
     *
     * @return T|null
     */
    public function open(string $key, \Closure $open): ?object
    {
        if (($this->open[$key] ?? 0) >= $this->max) {
            return null;
        }
        $this->open[$key] = ($this->open[$key] ?? 0) + 1;
        try {
            $item = $open();
        } catch (\Throwable $e) {
            $this->open[$key]--;
            $this->wakeOne($key);
            throw $e;
        }
        $this->opened++;
        $this->taken[\spl_object_id($item)] = true;

        return $item;
    }

    /**
     * $item, taken, is idle again (the most recently used of $key); false if it was not taken.
     *
     * @param T $item
     */
    public function putBack(string $key, object $item): bool
    {
        $id = \spl_object_id($item);
        if (!isset($this->taken[$id])) {
            return false;
        }
        unset($this->taken[$id]);
        $this->idle[$key][] = $item;

        return true;
    }

    /**
     * $item, taken, is no longer open (its owner closes it); false if it was not taken.
     *
     * @param T $item
     */
    public function remove(string $key, object $item): bool
    {
        $id = \spl_object_id($item);
        if (!isset($this->taken[$id])) {
            return false;
        }
        unset($this->taken[$id]);
        if (--$this->open[$key] === 0 && ($this->idle[$key] ?? []) === [] && ($this->waiting[$key] ?? null)?->isEmpty() !== false) {
            if (isset($this->waiting[$key])) {
                $this->nextWaiter = max($this->nextWaiter, $this->waiting[$key]->nextId());
            }
            unset($this->open[$key], $this->idle[$key], $this->waiting[$key]);
        }

        return true;
    }

    /**
     * Queues $wake for the next turn of $key; returns the id for stopWaiting().
     *
     * @param \Closure(): bool $wake returns false if the wait is already over, to pass the turn on
     */
    public function wait(string $key, \Closure $wake): int
    {
        if (!isset($this->waiting[$key])) {
            /** @var Fifo<\Closure(): bool> $waiting */
            $waiting = new Fifo($this->nextWaiter);
            $this->waiting[$key] = $waiting;
        }

        return $this->waiting[$key]->push($wake);
    }

    public function stopWaiting(string $key, int $id): void
    {
        ($this->waiting[$key] ?? null)?->remove($id);
    }

    /** Gives the turn of $key to its first waiter (also: one woken that gives up passes it on). */
    public function wakeOne(string $key): void
    {
        $waiting = $this->waiting[$key] ?? null;
        while (($wake = $waiting?->shift()) !== null) {
            if ($wake()) {
                return;
            }
        }
    }

    /** @return list<string> the keys that have idle objects, or had */
    public function keys(): array
    {
        return \array_keys($this->idle);
    }

    /** Objects open now for $key, taken or idle. */
    public function openCount(string $key): int
    {
        return $this->open[$key] ?? 0;
    }

    public function idleCount(string $key): int
    {
        return \count($this->idle[$key] ?? []);
    }

    /** Objects opened since this pool was made, for every key. */
    public function openedCount(): int
    {
        return $this->opened;
    }
}
