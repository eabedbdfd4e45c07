<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql;

use Kiln\Db\Connection;
use Kiln\Db\ConnectionException;
use Kiln\Db\Internal\LinkState;
use Kiln\Db\Mysql\Event\Done;
use Kiln\Db\Mysql\Event\Prepared;
use Kiln\Db\Mysql\Event\Ready;
use Kiln\Db\Mysql\Event\ResultSet;
use Kiln\Db\Mysql\Event\Row;
use Kiln\Db\Mysql\Event\ServerError;
use Kiln\Db\QueryException;
use Kiln\Db\Result;

use function Kiln\Loop\awaitReadable;

use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\StreamException;

use function Kiln\Loop\write;

/**
 * A MySQL/MariaDB connection: MysqlCodec on a non-blocking socket, read when the codec needs bytes and
 * the loop says they are there. Statements with parameters are prepared once (COM_STMT_PREPARE) and
 * executed by id; at most MAX_STATEMENTS stay prepared, the oldest closed first. query() keeps the rows of
 * the first result set and the counts of the last; stream() reads the socket only as rows are consumed.
 */
final class MysqlConnection implements Connection
{
    public const MAX_STATEMENTS = 256;
    private const READ_SIZE = 65536;

    private LinkState $state = LinkState::Ready;
    /** @var array<string, Prepared> SQL => statement, oldest first */
    private array $statements = [];

    /** @param resource $socket non-blocking, past the handshake */
    public function __construct(
        private readonly mixed $socket,
        private readonly MysqlCodec $codec,
        private readonly string $describe,
    ) {}

    public function run(string $sql, array $params = [], ?Cancellation $cancellation = null): Result
    {
        $this->state = $this->state->enter();
        try {
            $this->send($sql, $params, $cancellation);
            $rows = [];
            $sets = 0;
            while (true) {
                $event = $this->next($cancellation);
                if ($event instanceof ResultSet) {
                    $sets++;
                } elseif ($event instanceof Row && $sets === 1) {
                    $rows[] = $event->values;
                } elseif ($event instanceof ServerError) {
                    throw new QueryException($event->message, $event->sqlState, code: $event->code);
                } elseif ($event instanceof Done && !$event->moreResults) {
                    $this->state = $this->state->leave();

                    return new Result($rows, $event->affectedRows, $event->lastInsertId);
                }
            }
        } catch (QueryException $e) {
            $this->state = $this->state->leave();
            throw $e;
        } catch (\Throwable $e) {
            if ($this->isMisuse($e)) {
                $this->state = $this->state->leave();
                throw $e;
            }
            throw $this->breakDown($e);
        }
    }

    public function stream(string $sql, array $params = [], int $batch = 1000, ?Cancellation $cancellation = null): \Generator
    {
        $this->state = $this->state->enter();
        $finished = false;
        try {
            $this->send($sql, $params, $cancellation);
            $sets = 0;
            while (true) {
                $event = $this->next($cancellation);
                if ($event instanceof ResultSet) {
                    $sets++;
                } elseif ($event instanceof Row && $sets === 1) {
                    yield $event->values;
                } elseif ($event instanceof ServerError) {
                    $finished = true;
                    $this->state = $this->state->leave();
                    throw new QueryException($event->message, $event->sqlState, code: $event->code);
                } elseif ($event instanceof Done && !$event->moreResults) {
                    $finished = true;
                    $this->state = $this->state->leave();

                    return;
                }
            }
        } catch (QueryException $e) {
            throw $e;
        } catch (\Throwable $e) {
            $finished = true;
            if ($this->isMisuse($e)) {
                $this->state = $this->state->leave();
                throw $e;
            }
            throw $this->breakDown($e);
        } finally {
            if (!$finished) {
                $this->breakDown(null); // abandoned half-way: the rest of the result is still on the wire
            }
        }
    }

    public function inTransaction(): bool
    {
        return $this->codec->inTransaction();
    }

    /** Also true for an idle connection the server has ended meanwhile (a restart, KILL, wait_timeout). */
    public function isBroken(): bool
    {
        if ($this->state === LinkState::Ready && $this->endedWhileIdle()) {
            $this->state = LinkState::Broken;
        }

        return $this->state === LinkState::Broken || $this->state === LinkState::Closed;
    }

    public function close(): void
    {
        if ($this->state === LinkState::Closed) {
            return;
        }
        if ($this->state === LinkState::Ready && $this->codec->isReady()) {
            $this->codec->quit();
            @fwrite($this->socket, $this->codec->output()); // best effort: a few bytes into an empty buffer
        }
        $this->state = LinkState::Closed;
        @fclose($this->socket);
    }

    /** @param list<mixed> $params */
    private function send(string $sql, array $params, ?Cancellation $cancellation): void
    {
        if ($params === []) {
            $this->codec->query($sql);
        } else {
            $statement = $this->statements[$sql] ?? $this->prepare($sql, $cancellation);
            if (\count($params) !== $statement->paramCount) {
                throw new \ValueError(\sprintf('The statement takes %d parameters, %d given', $statement->paramCount, \count($params)));
            }
            $this->codec->execute($statement->id, $params);
        }
        $this->flush($cancellation);
    }

    private function prepare(string $sql, ?Cancellation $cancellation): Prepared
    {
        if (\count($this->statements) >= self::MAX_STATEMENTS) {
            $oldest = array_shift($this->statements);
            $this->codec->closeStatement($oldest->id); // no answer comes
        }
        $this->codec->prepare($sql);
        $this->flush($cancellation);
        $event = $this->next($cancellation);
        if ($event instanceof ServerError) {
            throw new QueryException($event->message, $event->sqlState, code: $event->code);
        }
        if (!$event instanceof Prepared) {
            throw new MysqlProtocolException('COM_STMT_PREPARE was answered with ' . $event::class);
        }

        return $this->statements[$sql] = $event;
    }

    private function next(?Cancellation $cancellation): Ready|ResultSet|Row|Done|Prepared|ServerError
    {
        while (($event = $this->codec->next()) === null) {
            $this->flush($cancellation);
            $bytes = @fread($this->socket, self::READ_SIZE);
            if ($bytes === false || ($bytes === '' && feof($this->socket))) {
                throw new ConnectionException("The connection to {$this->describe} was lost (the server closed it)");
            }
            if ($bytes === '') {
                awaitReadable($this->socket, $cancellation);
                continue;
            }
            $this->codec->feed($bytes);
        }

        return $event;
    }

    private function flush(?Cancellation $cancellation): void
    {
        $out = $this->codec->output();
        if ($out !== '') {
            write($this->socket, $out, $cancellation);
        }
    }

    /**
     * Parameters the statement cannot take (their number, a type): found before the command is sent, so the
     * connection has nothing in flight and stays usable.
     */
    private function isMisuse(\Throwable $e): bool
    {
        return ($e instanceof \ValueError || $e instanceof \TypeError) && $this->codec->isReady();
    }

    /** Between commands the server sends nothing: readable means closed, or an error it sent before closing. */
    private function endedWhileIdle(): bool
    {
        $read = [$this->socket];
        $none = null;

        return @stream_select($read, $none, $none, 0) !== 0;
    }

    private function breakDown(?\Throwable $e): \Throwable
    {
        $said = $e instanceof StreamException ? $this->lastWords() : null; // a failed write
        if ($this->state !== LinkState::Closed) {
            $this->state = LinkState::Broken;
            @fclose($this->socket);
            $this->state = LinkState::Closed;
        }
        if ($said !== null) {
            return new ConnectionException("The server closed the connection to {$this->describe}: [$said->sqlState] $said->message ($said->code)", 0, $e);
        }
        if ($e === null || $e instanceof ConnectionException || $e instanceof CancelledException || $e instanceof \Error) {
            return $e ?? new ConnectionException('abandoned');
        }

        return new ConnectionException("The connection to {$this->describe} failed: {$e->getMessage()}", 0, $e);
    }

    /**
     * The error the server sent before it closed the connection, if it is still to be read: e.g. "Got a packet
     * bigger than 'max_allowed_packet' bytes", which otherwise shows only as a failed write.
     */
    private function lastWords(): ?ServerError
    {
        // recv() itself: after a failed write the stream counts as ended and fread() reads nothing
        $bytes = @stream_socket_recvfrom($this->socket, self::READ_SIZE);

        return \is_string($bytes) ? MysqlCodec::parting($bytes) : null;
    }
}
