<?php

declare(strict_types=1);

namespace Kiln\Db;

use Kiln\Loop\Cancellation;

/**
 * The statements of one transaction, all on the one connection the transaction holds. Valid only inside
 * the callback given to transaction(); using it afterwards is an \Error. A nested transaction() is a
 * SAVEPOINT: rolled back to when its callback throws, released when it returns.
 */
final class Transaction implements Executor
{
    private bool $open = true;
    private int $savepoints = 0;

    /** @internal made by Pool::transaction() and Transaction::transaction() */
    public function __construct(
        private readonly Connection $connection,
        private readonly int $depth = 0,
    ) {}

    public function query(string $sql, array $params = [], ?Cancellation $cancellation = null): Result
    {
        return $this->connection()->run($sql, $params, $cancellation);
    }

    public function execute(string $sql, array $params = [], ?Cancellation $cancellation = null): Result
    {
        return $this->connection()->run($sql, $params, $cancellation);
    }

    public function stream(string $sql, array $params = []): \Generator
    {
        return $this->connection()->stream($sql, $params);
    }

    public function transaction(\Closure $fn): mixed
    {
        $connection = $this->connection();
        $name = 'kiln_savepoint_' . $this->depth . '_' . ++$this->savepoints;
        $connection->run("SAVEPOINT $name");
        $nested = new self($connection, $this->depth + 1);
        try {
            $value = $fn($nested);
        } catch (\Throwable $e) {
            $nested->end();
            if (!$connection->isBroken()) {
                try {
                    $connection->run("ROLLBACK TO SAVEPOINT $name");
                } catch (DbException) {
                    $connection->close(); // the whole transaction ends with it; the caller gets its own error
                }
            }
            throw $e;
        }
        $nested->end();
        $connection->run("RELEASE SAVEPOINT $name");

        return $value;
    }

    /** @internal */
    public function end(): void
    {
        $this->open = false;
    }

    private function connection(): Connection
    {
        if (!$this->open) {
            throw new \Error('This transaction has ended: use the Transaction only inside its transaction() callback');
        }
        if ($this->connection->isBroken()) {
            throw new ConnectionException('The connection of this transaction is closed, and the server has rolled the transaction back:'
                . ' a statement on it was cancelled or lost, or (MySQL) a stream on it was left unfinished');
        }

        return $this->connection;
    }
}
