<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * Key → small array, shared by every worker process of a node, changed by a read-modify-write closure under
 * a lock: what the rate limiter and the SSE event ids need. Counters, caches and sessions use Store instead
 * (calls a Redis backend can run as single commands), on the same backends (docs/design/020).
 *
 * Contract:
 * - update() MUST run read, $fn and write as one atomic step for that key, across every process that
 *   uses the same store: two concurrent updates of one key never see the same $current. It passes $fn
 *   the live value (null when absent or expired); $fn returns the new value, or null to delete the key.
 *   update() returns what $fn returned.
 * - $fn runs under a lock: it MUST be quick and MUST NOT suspend the Fiber, do I/O or call the store
 *   again (an implementation MAY throw \Error on such re-entry). If $fn throws, nothing is written and
 *   the exception propagates.
 * - Values MUST be arrays of scalars, nulls and such arrays (no objects); an implementation MAY refuse
 *   a value larger than it can hold with \ValueError. Keys are any string; an implementation MAY hash them.
 * - Each write sets the key to expire $ttlSeconds later (0: never, < 0 is a \ValueError); an expired key
 *   reads as absent. Resolution is one second: a key lives at least $ttlSeconds, at most one second more.
 * - An implementation MUST NOT grow without bound: it MUST reclaim expired entries, and when full it
 *   MAY evict live ones (soonest to expire first); callers MUST treat an absent key as a fresh start.
 * - A failure of the backing (memory, file, server) throws StoreException.
 */
interface SharedState
{
    /**
     * @param \Closure(?array<mixed>): ?array<mixed> $fn
     *
     * @return ?array<mixed> what $fn returned
     */
    public function update(string $key, \Closure $fn, int $ttlSeconds): ?array;

    /** @return ?array<mixed> null when absent or expired */
    public function get(string $key): ?array;

    public function delete(string $key): void;
}
