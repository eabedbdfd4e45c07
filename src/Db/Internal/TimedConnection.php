<?php

declare(strict_types=1);

namespace Kiln\Db\Internal;

use Kiln\Db\Connection;
use Kiln\Db\Result;
use Kiln\Db\StatementTimeoutException;
use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\CompositeCancellation;

/**
 * A pool's connection whose every run() ends within the pool's statement timeout: past it, the statement is given up
 * as a cancelled one is (its connection closes) and the caller gets StatementTimeoutException. A Cancellation the
 * caller gives still applies, and when it is the one that fires the caller gets its exception, not this one's.
 * A stream() gets the timeout for each wait for the server (ServerWait); the caller's pace between rows is its own.
 * A statement that runs inside a stream's loop (PostgreSQL allows it in a transaction) has a wait of its own.
 *
 * @internal made by Pool for each connection it opens
 */
final class TimedConnection implements Connection
{
    /**
     * The connection's one deadline: a statement or a stream's wait starts it, its end stops it. One timer serves
     * every statement (a timer per statement cost some 6 µs of a point select's 35); once it fires the connection is
     * closed, so it is never needed afresh.
     */
    private readonly ServerWait $deadline;

    public function __construct(
        private readonly Connection $inner,
        private readonly float $timeout,
        private readonly string $database,
    ) {
        $this->deadline = new ServerWait($timeout);
    }

    public function run(string $sql, array $params = [], ?Cancellation $cancellation = null): Result
    {
        $deadline = $this->deadline;
        $own = $deadline->cancellation();
        $deadline->waiting();
        try {
            $result = $this->inner->run($sql, $params, $cancellation === null ? $own : new CompositeCancellation($cancellation, $own));
        } catch (CancelledException $e) {
            $deadline->paused();
            if (!self::isFrom($own, $e)) {
                throw $e; // the caller's own cancellation fired first
            }
            throw $this->timedOut($e);
        } catch (\Throwable $e) {
            $deadline->paused();
            throw $e;
        }
        $deadline->paused();
        return $result;
    }

    public function stream(string $sql, array $params = [], int $batch = 1000, ?Cancellation $cancellation = null): \Generator
    {
        $deadline = $this->deadline;
        $own = $deadline->cancellation();
        $rows = $this->inner->stream($sql, $params, $batch, $cancellation === null ? $own : new CompositeCancellation($cancellation, $own));
        try {
            $deadline->waiting();
            foreach ($rows as $key => $row) {
                $deadline->paused(); // the caller's time with the row is not the server's
                yield $key => $row;
                $deadline->waiting();
            }
            return $rows->getReturn();
        } catch (CancelledException $e) {
            if (!self::isFrom($own, $e)) {
                throw $e;
            }
            throw $this->timedOut($e);
        } finally {
            $deadline->paused();
        }
    }

    public function inTransaction(): bool
    {
        return $this->inner->inTransaction();
    }

    public function isBroken(): bool
    {
        return $this->inner->isBroken();
    }

    public function close(): void
    {
        $this->deadline->stop();
        $this->inner->close();
    }

    private function timedOut(CancelledException $e): StatementTimeoutException
    {
        return new StatementTimeoutException(\sprintf(
            'A statement on %s ran past the statement timeout of %s s (the `timeout` option of the database URL; 0 turns it off): '
            . 'its connection was closed, and the server may still finish it',
            $this->database,
            self::seconds($this->timeout),
        ), 0, $e);
    }

    /** Whether $e is the one $deadline gave (a composite passes on the very exception of the one that fired). */
    private static function isFrom(Cancellation $deadline, CancelledException $e): bool
    {
        try {
            $deadline->throwIfRequested();
        } catch (CancelledException $own) {
            return $own === $e;
        }
        return false;
    }

    private static function seconds(float $seconds): string
    {
        return rtrim(rtrim(number_format($seconds, 3, '.', ''), '0'), '.');
    }
}
