<?php

declare(strict_types=1);

namespace Kiln\Db;

use Kiln\Loop\Cancellation;

/**
 * One open connection to a database server, driven by Kiln's loop: a call suspends the calling Fiber
 * (never the worker) until the server answers. A connection runs one call at a time; Pool makes sure of it.
 *
 * - run() and stream() MUST throw QueryException for an error the server reported and leave the connection
 *   usable; for anything else (lost socket, protocol error, a cancellation half-way) they MUST throw
 *   ConnectionException or the CancelledException, and isBroken() is then true for good.
 * - A statement with parameters SHOULD be prepared once per connection and reused.
 * - stream() MUST hold at most about $batch rows in memory at a time. A stream abandoned before its end
 *   MAY leave a transaction open (inTransaction() says so); the pool then rolls it back.
 * - inTransaction() MUST be the server's view (BEGIN sent without COMMIT/ROLLBACK, or a failed one).
 * - close() MAY be called at any time, more than once; it never throws.
 */
interface Connection
{
    /**
     * @param list<mixed> $params bound in order ($1, $2 in PostgreSQL; ? in MySQL)
     *
     * @throws QueryException|ConnectionException|\Kiln\Loop\CancelledException
     */
    public function run(string $sql, array $params = [], ?Cancellation $cancellation = null): Result;

    /**
     * @param list<mixed> $params
     * @param Cancellation|null $cancellation given up (as run() is) once requested, when it next waits for the server
     *
     * @return \Generator<int, array<string, mixed>>
     *
     * @throws QueryException|ConnectionException|\Kiln\Loop\CancelledException
     */
    public function stream(string $sql, array $params = [], int $batch = 1000, ?Cancellation $cancellation = null): \Generator;

    public function inTransaction(): bool;

    public function isBroken(): bool;

    public function close(): void;
}
