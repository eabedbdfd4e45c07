<?php

declare(strict_types=1);

namespace Kiln\Db\Postgres;

use Kiln\Db\ConnectionException;
use Kiln\Db\Connector;
use Kiln\Db\Dsn;
use Kiln\Db\Postgres\Internal\SocketFinder;
use Kiln\Db\QueryException;

use function Kiln\Loop\awaitReadable;
use function Kiln\Loop\awaitWritable;

use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\CompositeCancellation;
use Kiln\Loop\TimeoutCancellation;

/**
 * Opens PostgreSQL connections without blocking the worker: libpq's asynchronous connect
 * (PGSQL_CONNECT_ASYNC), driven by pg_connect_poll() and the loop watching a copy of libpq's socket
 * (SocketFinder says why not pg_socket() itself).
 */
final class PgConnector implements Connector
{
    /** How often a session checks, during a statement, that its client is still there (milliseconds). */
    private const CLIENT_CHECK_MS = 1000;

    public function __construct(private readonly Dsn $dsn) {}

    /**
     * On PostgreSQL 14 and later the session checks, every second of a statement, that its client is still there
     * (`client_connection_check_interval`), unless the role or database set an interval of its own: a statement whose
     * connection Kiln closes half-way (the pool's statement timeout, a Cancellation) then stops on the server too,
     * instead of running to its end. A server that refuses the setting keeps the connection as it is. Connecting and
     * the setting share one connect_timeout.
     */
    public function connect(?Cancellation $cancellation = null): PgConnection
    {
        $limit = $this->connectTimeout();
        [$link, $socket] = $this->open($cancellation, $limit);
        $connection = new PgConnection($link, $socket, describe: $this->dsn->redacted());
        if ((int) (pg_version($link)['server'] ?? '0') < 14) {
            return $connection;
        }
        try {
            $connection->run(
                "SELECT set_config('client_connection_check_interval', '" . self::CLIENT_CHECK_MS . "', false)"
                . " WHERE current_setting('client_connection_check_interval') = '0'",
                [],
                $cancellation === null ? $limit : new CompositeCancellation($cancellation, $limit),
            );
        } catch (QueryException) {
            // kept as it is: the statement a closed connection leaves runs to its end, as before
        } catch (ConnectionException | CancelledException $e) {
            $connection->close();
            throw $this->failed($e, $limit, $cancellation);
        } catch (\Throwable $e) {
            $connection->close();
            throw $e;
        }

        return $connection;
    }

    /**
     * A connection of its own that LISTENs on $channel; close() the listener when done.
     *
     * @throws ConnectionException
     */
    public function listen(string $channel, ?Cancellation $cancellation = null): PgListener
    {
        [$link, $socket] = $this->open($cancellation, $this->connectTimeout());
        $connection = new PgConnection($link, $socket, $this->dsn->redacted());
        $connection->run('LISTEN ' . pg_escape_identifier($link, $channel), [], $cancellation);

        return new PgListener($connection, $link);
    }

    public function describe(): string
    {
        return $this->dsn->redacted();
    }

    /**
     * @param TimeoutCancellation $timeout connect_timeout, running since the connect began
     * @return array{\PgSql\Connection, resource} the link and a watchable copy of its socket
     */
    private function open(?Cancellation $cancellation, TimeoutCancellation $timeout): array
    {
        $until = $cancellation === null ? $timeout : new CompositeCancellation($cancellation, $timeout);
        $warning = null;
        set_error_handler(static function (int $level, string $message) use (&$warning): bool {
            $warning = $message;

            return true;
        });
        $before = SocketFinder::sockets();
        try {
            $link = pg_connect($this->connectionString(), PGSQL_CONNECT_ASYNC | PGSQL_CONNECT_FORCE_NEW);
        } finally {
            restore_error_handler();
        }
        if ($link === false) {
            throw new ConnectionException($this->failure(preg_replace('/^pg_connect\(\): /', '', (string) $warning) ?? ''));
        }
        $socket = null;
        try {
            $after = SocketFinder::sockets();
            if (\count(array_diff_assoc($after, $before)) !== 1 && pg_connect_poll($link) === PGSQL_POLLING_FAILED) {
                throw new ConnectionException($this->failure(pg_last_error($link))); // failed before it had a socket
            }
            $fd = SocketFinder::newOne($before, $after, $this->dsn->redacted());
            $target = $after[$fd];
            $socket = SocketFinder::duplicate($fd, $this->dsn->redacted());
            while (true) {
                $status = pg_connect_poll($link);
                $now = SocketFinder::target($fd);
                if ($now !== $target && $status !== PGSQL_POLLING_FAILED) {
                    // libpq gave up on one address and opened a socket for the next: the lowest free
                    // descriptor, which is the one it just closed.
                    if ($now === null || !str_starts_with($now, 'socket:')) {
                        throw new ConnectionException($this->failure('the connection moved to a socket Kiln cannot find; give an IP address or a unix socket'));
                    }
                    fclose($socket);
                    [$target, $socket] = [$now, SocketFinder::duplicate($fd, $this->dsn->redacted())];
                }
                if ($status === PGSQL_POLLING_OK) {
                    return [$link, $socket];
                }
                if ($status === PGSQL_POLLING_FAILED) {
                    throw new ConnectionException($this->failure(pg_last_error($link)));
                }
                $status === PGSQL_POLLING_WRITING ? awaitWritable($socket, $until) : awaitReadable($socket, $until);
            }
        } catch (ConnectionException | CancelledException $e) {
            pg_close($link);
            if (\is_resource($socket)) {
                fclose($socket);
            }
            throw $this->failed($e, $timeout, $cancellation);
        }
    }

    /** What a connect that failed or was cancelled throws: a ConnectionException when connect_timeout ended it. */
    private function failed(ConnectionException|CancelledException $e, TimeoutCancellation $timeout, ?Cancellation $cancellation): \Throwable
    {
        return $timeout->isRequested() && !($cancellation?->isRequested() ?? false)
            ? new ConnectionException($this->failure('no answer within connect_timeout'), 0, $e)
            : $e;
    }

    private function connectTimeout(): TimeoutCancellation
    {
        return new TimeoutCancellation((float) $this->dsn->option('connect_timeout', '10'), 'connect timeout');
    }

    private function failure(string $why): string
    {
        return "Cannot connect to {$this->dsn->redacted()}: " . trim($why);
    }

    private function connectionString(): string
    {
        $dsn = $this->dsn;
        $parts = [
            'host' => $dsn->socket ?? $dsn->host,
            'port' => (string) $dsn->port,
            'user' => $dsn->user,
            'password' => $dsn->password(),
            'dbname' => $dsn->database,
            'client_encoding' => 'UTF8',
            'application_name' => $dsn->option('application_name', 'kiln'),
            'sslmode' => $dsn->option('sslmode', 'prefer'),
        ];
        $string = '';
        foreach ($parts as $name => $value) {
            if ($value !== '') {
                $string .= "$name='" . addcslashes($value, "'\\") . "' ";
            }
        }

        return $string;
    }
}
