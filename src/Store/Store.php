<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * Key → value with a time to live, shared by every worker of a node (ApcuStore, TableStore) or, later, by
 * every node (a Redis backend). Counter, Lock, Cache and the session store are built on these calls only,
 * so a backend implements this one interface to carry all of them.
 *
 * Contract:
 * - Values are scalars (int, float, string, bool) and arrays of scalars, nulls and such arrays. An object,
 *   a resource, a closure, a top-level null, or a value larger than the backend holds MUST be refused with a
 *   \ValueError that says which; nothing is written then.
 * - Every write is atomic for its key across all processes sharing the store. increment(), add() and
 *   compareAndSet() are linearizable against every other write of the same key (set() included).
 * - $ttl is in whole seconds: 0 never expires, < 0 is a \ValueError. An expired key reads as absent, at most
 *   one second late. increment() on an existing key and compareAndSet() that fails keep the key's expiry.
 * - Bounded: when full, a write evicts other keys (the backend documents which: soonest to expire first
 *   here) and counts them in evictions(); the write itself MUST then be stored or fail with
 *   StoreException, never be dropped silently.
 * - scan() visits every key that exists from the first call to the last at least once; keys added or removed
 *   meanwhile may or may not be visited. A key is never returned twice by the backends here.
 * - A failure of the backing (shared memory, a file, a server) throws StoreException.
 */
interface Store
{
    /** The value, or null when the key is absent or expired. */
    public function get(string $key): mixed;

    /** @throws \ValueError for a value that cannot be stored */
    public function set(string $key, mixed $value, int $ttl = 0): void;

    /** Stores the value only when the key is absent; true when it did. */
    public function add(string $key, mixed $value, int $ttl = 0): bool;

    /** True when the key existed. */
    public function delete(string $key): bool;

    /**
     * Adds $by to the integer under $key (an absent key counts as 0 and gets $ttl) and returns the result.
     *
     * @throws \ValueError when the key holds something other than an integer, or the sum would leave the
     *                     64-bit range (the value is then left as it was)
     */
    public function increment(string $key, int $by = 1, int $ttl = 0): int;

    /**
     * Writes $new (null: deletes) only when the key holds exactly $expected (=== ; null: the key is absent).
     * True when it wrote.
     */
    public function compareAndSet(string $key, mixed $expected, mixed $new, int $ttl = 0): bool;

    /** How many keys the store holds now (expired ones not yet reclaimed MAY be counted). */
    public function count(): int;

    /**
     * One page of keys: [next cursor, keys]. Start with '' and call again with the cursor returned until it
     * is '' again; a page may be empty before the end.
     *
     * @return array{string, list<string>}
     */
    public function scan(string $cursor = '', int $limit = 100): array;

    /** Live keys removed to make room since the store was created. */
    public function evictions(): int;
}
