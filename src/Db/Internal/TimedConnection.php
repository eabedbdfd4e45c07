<?php

declare(strict_types=1);

namespace Kiln\Db\Internal;

use Kiln\Db\Connection;
use Kiln\Db\Result;
use Kiln\Db\StatementTimeoutException;
use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\CompositeCancellation;
use Kiln\Loop\TimeoutCancellation;

/**
 * A pool's connection whose every run() ends within the pool's statement timeout: past it, the statement is given up
 * as a cancelled one is (its connection closes) and the caller gets StatementTimeoutException. A Cancellation the
 * caller gives still applies, and when it is the one that fires the caller gets its exception, not this one's.
 * A stream() gets the timeout for each wait for the server (ServerWait); the caller's pace between rows is its own.
 *
 * @internal made by Pool for each connection it opens
 */
final class TimedConnection implements Connection
{
    public function __construct(
        private readonly Connection $inner,
        private readonly float $timeout,
        private readonly string $database,
    ) {}

    public function run(string $sql, array $params = [], ?Cancellation $cancellation = null): Result
    {
        $deadline = new TimeoutCancellation($this->timeout, 'The statement timeout passed');
        try {
            return $this->inner->run($sql, $params, $cancellation === null ? $deadline : new CompositeCancellation($cancellation, $deadline));
        } catch (CancelledException $e) {
            if (!self::isFrom($deadline, $e)) {
                throw $e; // the caller's own cancellation fired first
            }
            throw $this->timedOut($e);
        }
    }

    public function stream(string $sql, array $params = [], int $batch = 1000, ?Cancellation $cancellation = null): \Generator
    {
        $deadline = new ServerWait($this->timeout);
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
            $deadline->stop();
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
