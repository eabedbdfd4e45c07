<?php

declare(strict_types=1);

namespace Kiln\Db\Postgres;

use Kiln\Db\Connection;
use Kiln\Db\ConnectionException;
use Kiln\Db\Internal\LinkState;
use Kiln\Db\QueryException;
use Kiln\Db\Result;

use function Kiln\Loop\awaitReadable;
use function Kiln\Loop\awaitWritable;

use Kiln\Loop\Cancellation;

/**
 * A PostgreSQL connection on ext-pgsql's asynchronous calls: pg_send_* puts a statement on the wire, then
 * the Fiber sleeps on the socket until pg_consume_input() has the whole answer, so pg_get_result() never
 * blocks. Statements with parameters are prepared once (pg_send_prepare) and run by name (pg_send_execute);
 * at most MAX_STATEMENTS stay prepared, the oldest deallocated first. A streamed query reads through a
 * cursor, $batch rows per FETCH.
 */
final class PgConnection implements Connection
{
    public const MAX_STATEMENTS = 256;
    /** What a kept statement fails with once its tables have changed shape ("cached plan must not change result type") */
    private const FEATURE_NOT_SUPPORTED = '0A000';

    private LinkState $state = LinkState::Ready;
    /** @var array<string, string> SQL => prepared statement name, oldest first */
    private array $statements = [];
    private int $names = 0;
    /** The command tag of the last result collected ("COMMIT", "ROLLBACK", "SELECT 3"…) */
    private string $lastTag = '';
    /**
     * @internal made by PgConnector
     *
     * @param resource $socket what the loop watches: a dup() of libpq's socket, closed with the connection
     */
    public function __construct(
        private readonly \PgSql\Connection $link,
        private readonly mixed $socket,
        private readonly string $describe,
    ) {}

    public function run(string $sql, array $params = [], ?Cancellation $cancellation = null): Result
    {
        return $this->statement($sql, $params, $cancellation, true);
    }

    public function stream(string $sql, array $params = [], int $batch = 1000, ?Cancellation $cancellation = null): \Generator
    {
        $own = !$this->inTransaction();
        $cursor = 'kiln_cursor_' . ++$this->names;
        if ($own) {
            $this->run('BEGIN', [], $cancellation);
        }
        // Not prepared: each cursor has a name of its own, so the statement would never run again.
        $this->statement("DECLARE $cursor NO SCROLL CURSOR FOR $sql", $params, $cancellation, false);
        do {
            $rows = $this->run("FETCH $batch FROM $cursor", [], $cancellation)->rows;
            foreach ($rows as $row) {
                yield $row;
            }
        } while (\count($rows) === $batch);
        $this->run("CLOSE $cursor", [], $cancellation);
        if ($own) {
            $this->run('COMMIT', [], $cancellation);
        }
    }

    /** @param list<mixed> $params bound to a statement prepared and kept ($keep), or to one used once */
    private function statement(string $sql, array $params, ?Cancellation $cancellation, bool $keep, bool $again = false): Result
    {
        $values = array_map(PgTypes::encode(...), $params); // a TypeError here leaves the connection as it was
        $kept = $keep && $params !== [] && isset($this->statements[$sql]);
        $this->state = $this->state->enter();
        try {
            if ($params === []) {
                $this->sent(pg_send_query($this->link, $sql), $cancellation);
            } elseif (!$keep) {
                $this->sent(pg_send_query_params($this->link, $sql, $values), $cancellation);
            } else {
                $name = $this->statements[$sql] ?? $this->prepare($sql, $cancellation);
                $this->sent(pg_send_execute($this->link, $name, $values), $cancellation);
            }
            $result = $this->collect($cancellation);
            if ($this->lastTag === 'ROLLBACK' && preg_match('/^\s*(COMMIT|END)\b/i', $sql) === 1) {
                // PostgreSQL answers COMMIT in a transaction that an error aborted with a ROLLBACK, and no error.
                throw new QueryException('The transaction was rolled back, not committed: a statement in it failed (and its error was caught)', '25P02');
            }
        } catch (QueryException $e) {
            $this->state = $this->state->leave();
            if ($kept && !$again && $e->sqlState === self::FEATURE_NOT_SUPPORTED) {
                return $this->prepareAgain($sql, $params, $cancellation, $e);
            }
            throw $e;
        } catch (\Throwable $e) {
            $this->breakDown();
            throw $e instanceof ConnectionException || $e instanceof \Kiln\Loop\CancelledException || $e instanceof \Error
                ? $e
                : new ConnectionException("The connection to {$this->describe} failed: {$e->getMessage()}", 0, $e);
        }
        $this->state = $this->state->leave();

        return $result;
    }

    /**
     * A kept statement whose tables changed shape since it was prepared (an ALTER TABLE: "cached plan must not
     * change result type", 0A000) fails so on every run: it is prepared again. Outside a transaction the failed
     * run changed nothing, so the statement runs again at once; inside one the transaction is aborted and the
     * error stands (the next transaction prepares it afresh).
     *
     * @param list<mixed> $params
     */
    private function prepareAgain(string $sql, array $params, ?Cancellation $cancellation, QueryException $error): Result
    {
        $stale = $this->statements[$sql];
        unset($this->statements[$sql]);
        if ($this->inTransaction()) {
            throw $error;
        }
        try {
            $this->run("DEALLOCATE $stale");
        } catch (QueryException) {
            // gone already: nothing to free
        }

        return $this->statement($sql, $params, $cancellation, true, true);
    }

    public function inTransaction(): bool
    {
        return $this->state !== LinkState::Closed
            && \in_array(pg_transaction_status($this->link), [PGSQL_TRANSACTION_INTRANS, PGSQL_TRANSACTION_INERROR], true);
    }

    /** Also true for an idle connection the server has ended meanwhile (a restart, a terminated backend, a timeout). */
    public function isBroken(): bool
    {
        if ($this->state === LinkState::Ready && $this->endedWhileIdle()) {
            $this->breakDown();
        }

        return $this->state === LinkState::Broken || $this->state === LinkState::Closed;
    }

    public function close(): void
    {
        if ($this->state === LinkState::Closed) {
            return;
        }
        if ($this->state !== LinkState::Ready) {
            // pg_close() first waits for the answer of a statement still running, blocking the worker until it
            // ends: shut the socket down under libpq so that the wait ends at once (PostgreSQL 14 and later then
            // stop the statement: see PgConnector::connect()).
            // A COPY in progress would keep that wait going for ever; libpq gives up on it once it has seen the
            // connection end.
            $raw = \function_exists('socket_import_stream') ? @socket_import_stream($this->socket) : false;
            if ($raw instanceof \Socket) {
                @socket_shutdown($raw, 2);
                for ($i = 0; $i < 1000 && pg_connection_status($this->link) === PGSQL_CONNECTION_OK; $i++) {
                    @pg_consume_input($this->link);
                }
            }
        }
        $this->state = LinkState::Closed;
        pg_close($this->link);
        @fclose($this->socket);
    }

    /** @internal the raw link, for PgListener */
    public function waitForInput(?Cancellation $cancellation): void
    {
        awaitReadable($this->socket, $cancellation);
        if (!pg_consume_input($this->link)) {
            throw new ConnectionException("The connection to {$this->describe} was lost: " . pg_last_error($this->link));
        }
    }

    private function prepare(string $sql, ?Cancellation $cancellation): string
    {
        if (\count($this->statements) >= self::MAX_STATEMENTS) {
            $oldest = (string) array_shift($this->statements);
            $this->sent(pg_send_query($this->link, "DEALLOCATE $oldest"), $cancellation);
            $this->collect($cancellation);
        }
        $name = 'kiln_' . ++$this->names;
        $this->sent(pg_send_prepare($this->link, $name, $sql), $cancellation);
        $this->collect($cancellation);

        return $this->statements[$sql] = $name;
    }

    /** @param int|bool $sent what pg_send_* returned: true sent, 0 sent in part (flush the rest), false failed */
    private function sent(int|bool $sent, ?Cancellation $cancellation): void
    {
        if ($sent === false) {
            throw new ConnectionException("The connection to {$this->describe} cannot send: " . pg_last_error($this->link));
        }
        while (($flushed = pg_flush($this->link)) !== true) { // 0: more to send; false: failed
            if ($flushed === false) {
                throw new ConnectionException("The connection to {$this->describe} cannot send: " . pg_last_error($this->link));
            }
            awaitWritable($this->socket, $cancellation);
        }
    }

    /** Every result of the statement sent; the last one with rows (or the last one) is returned. */
    private function collect(?Cancellation $cancellation): Result
    {
        $this->lastTag = '';
        $error = null;
        $answer = null;
        while (true) {
            // @: on a connection the server ended, pg_connection_busy() raises a notice as it switches the socket's
            // blocking mode; the loss itself is found below (pg_get_result(), then the status) and thrown.
            if (@pg_connection_busy($this->link)) {
                $this->waitForInput($cancellation);
                continue;
            }
            $result = pg_get_result($this->link);
            if ($result === false) {
                break;
            }
            $status = pg_result_status($result);
            if ($status === PGSQL_COPY_IN || $status === PGSQL_COPY_OUT) {
                // libpq now waits for the copy's data, and hands this result out again on every call.
                pg_free_result($result);
                throw new \Error('COPY … FROM STDIN and COPY … TO STDOUT are not supported by Kiln\\Db (its connection is closed):'
                    . ' copy from or to a file on the server, or use INSERT and SELECT');
            }
            if ($status === PGSQL_FATAL_ERROR) {
                $error ??= $this->error($result);
            } else {
                $answer = PgRows::of($result);
                $this->lastTag = (string) pg_result_status($result, PGSQL_STATUS_STRING);
            }
            pg_free_result($result);
        }
        if (pg_connection_status($this->link) !== PGSQL_CONNECTION_OK) {
            throw new ConnectionException("The connection to {$this->describe} was lost"
                . ($error === null ? '' : ": {$error->getMessage()}"), 0, $error);
        }
        if ($error !== null) {
            throw $error;
        }

        return $answer ?? new Result([]);
    }

    private function error(\PgSql\Result $result): QueryException
    {
        $state = pg_result_error_field($result, PGSQL_DIAG_SQLSTATE);
        $message = pg_result_error_field($result, PGSQL_DIAG_MESSAGE_PRIMARY);
        $message = \is_string($message) ? $message : trim((string) pg_result_error($result));
        // The detail says which value ("Key (id)=(1) already exists."), the hint what to do.
        foreach (['detail' => PGSQL_DIAG_MESSAGE_DETAIL, 'hint' => PGSQL_DIAG_MESSAGE_HINT] as $name => $field) {
            $more = pg_result_error_field($result, $field);
            if (\is_string($more) && $more !== '') {
                $message .= " ($name: $more)";
            }
        }

        return new QueryException($message, \is_string($state) ? $state : 'HY000');
    }

    /**
     * An idle connection has nothing to read unless the server spoke first: a NOTIFY, or an error followed by
     * the end of the connection (PostgreSQL sends "terminating connection" before it closes).
     */
    private function endedWhileIdle(): bool
    {
        for ($round = 0; $round < 2; $round++) {
            $read = [$this->socket];
            $none = null;
            if (@stream_select($read, $none, $none, 0) === 0) {
                return false;
            }
            // The error comes first and libpq keeps it as a notice; the end of the stream shows on the next read.
            if (!@pg_consume_input($this->link) || pg_connection_status($this->link) !== PGSQL_CONNECTION_OK) {
                return true;
            }
        }

        return false;
    }

    private function breakDown(): void
    {
        if ($this->state !== LinkState::Closed) {
            $this->state = LinkState::Broken;
            $this->close();
        }
    }
}
