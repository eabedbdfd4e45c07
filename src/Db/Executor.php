<?php

declare(strict_types=1);

namespace Kiln\Db;

use Kiln\Loop\Cancellation;

/**
 * Where statements run: a Pool (each call on whichever connection is free) or a Transaction (each call on
 * the transaction's connection). Parameters bind in order: `$1, $2` in PostgreSQL, `?` in MySQL; a value is
 * null, bool, int, float, string (text), Binary (bytes) or a \DateTimeInterface.
 */
interface Executor
{
    /**
     * @param list<mixed> $params
     *
     * @throws DbException
     */
    public function query(string $sql, array $params = [], ?Cancellation $cancellation = null): Result;

    /**
     * The same as query(), for a statement run for its effect: read affectedRows and lastInsertId.
     *
     * @param list<mixed> $params
     *
     * @throws DbException
     */
    public function execute(string $sql, array $params = [], ?Cancellation $cancellation = null): Result;

    /**
     * The rows one at a time, never all in memory at once. Consume it before running anything else on
     * the same transaction.
     *
     * @param list<mixed> $params
     *
     * @return \Generator<int, array<string, mixed>>
     *
     * @throws DbException
     */
    public function stream(string $sql, array $params = []): \Generator;

    /**
     * Runs $fn in a transaction: COMMIT when it returns, ROLLBACK when it throws (then rethrown). In a
     * Transaction this is a savepoint, released or rolled back to.
     *
     * @template T
     *
     * @param \Closure(Transaction): T $fn
     *
     * @return T
     */
    public function transaction(\Closure $fn): mixed;
}
