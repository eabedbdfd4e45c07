<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Db;

use Kiln\Db\Binary;
use Kiln\Db\ConnectionException;
use Kiln\Db\Dsn;
use Kiln\Db\Postgres\PgConnector;
use Kiln\Db\QueryException;
use Kiln\Db\StatementTimeoutException;
use Kiln\Db\Transaction;

use function Kiln\Loop\async;
use function Kiln\Loop\delay;

use Kiln\Tests\Support\PostgresServer;

/** Kiln\Db against a real PostgreSQL 15 started for this class. */
final class PostgresTest extends PoolContractTestCase
{
    public function testEveryParameterTypeNullsAndBinaryDataGoThroughAPreparedStatement(): void
    {
        $pool = $this->pool();
        $bytes = implode('', array_map('chr', range(0, 255)));
        $row = $this->inFiber(static fn() => $pool->query(
            'SELECT $1::int8 AS i, $2::float8 AS f, $3::bool AS t, $4::bool AS b, $5::text AS s, $6::bytea AS bin,'
            . ' $7::timestamptz AS ts, $8::int AS n, $9::numeric AS num, $10::text AS empty',
            [PHP_INT_MAX, 2.5, true, false, "h\u{e9}llo 'quoted'", new Binary($bytes), new \DateTimeImmutable('2026-11-26 10:00:00+00:00'), null, '1.10', ''],
        )->first());
        self::assertSame(PHP_INT_MAX, $row['i'] ?? null);
        self::assertSame(2.5, $row['f'] ?? null);
        self::assertTrue($row['t'] ?? null);
        self::assertFalse($row['b'] ?? null);
        self::assertSame("h\u{e9}llo 'quoted'", $row['s'] ?? null);
        self::assertSame($bytes, $row['bin'] ?? null, 'all 256 byte values survive');
        self::assertSame('2026-11-26 10:00:00+00', $row['ts'] ?? null);
        self::assertNull($row['n']);
        self::assertSame('1.10', $row['num'] ?? null);
        self::assertSame('', $row['empty'] ?? null, 'an empty string is not NULL');
    }

    public function testATransactionAnErrorAbortedIsNotReportedAsCommitted(): void
    {
        $pool = $this->pool('max=1');
        [$error, $stored] = $this->inFiber(static function () use ($pool): array {
            $pool->execute('CREATE TABLE IF NOT EXISTS swallowed (v text)');
            try {
                $pool->transaction(static function (Transaction $tx): void {
                    $tx->execute('INSERT INTO swallowed VALUES ($1)', ['lost']);
                    try {
                        $tx->execute('SELECT * FROM no_such_table_here');
                    } catch (QueryException) {
                        // caught, and the callback returns normally: PostgreSQL has aborted the transaction
                    }
                });
                $error = null;
            } catch (QueryException $e) {
                $error = $e;
            }

            return [$error, $pool->query('SELECT count(*) AS n FROM swallowed')->scalar()];
        });
        self::assertInstanceOf(QueryException::class, $error, 'transaction() returned as if it had committed');
        self::assertSame('25P02', $error->sqlState);
        self::assertStringContainsString('rolled back', $error->getMessage());
        self::assertSame(0, $stored, 'nothing was committed, and the connection is usable');
    }

    public function testAServerThatTakesTheConnectionButNeverAnswersFailsAtConnectTimeout(): void
    {
        $silent = stream_socket_server('tcp://127.0.0.1:0'); // the kernel completes the handshake; nobody answers
        self::assertIsResource($silent);
        $port = (int) substr((string) strrchr((string) stream_socket_get_name($silent, false), ':'), 1);
        $connector = new PgConnector(Dsn::parse("postgres://u:hunter2@127.0.0.1:$port/d?connect_timeout=0.3&sslmode=disable"));
        $started = microtime(true);
        try {
            $error = $this->inFiber(static function () use ($connector): ?\Throwable {
                try {
                    $connector->connect();
                } catch (\Throwable $e) {
                    return $e;
                }

                return null;
            });
        } finally {
            fclose($silent);
        }
        self::assertInstanceOf(ConnectionException::class, $error);
        self::assertSame("Cannot connect to postgres://u@127.0.0.1:$port/d: no answer within connect_timeout", $error->getMessage());
        self::assertLessThan(3.0, microtime(true) - $started);
    }

    public function testAStatementGivenUpByItsTimeoutStopsOnTheServerToo(): void
    {
        $pool = $this->pool('max=1&timeout=0.3');
        $marker = 'kiln-abandoned-' . bin2hex(random_bytes(4));
        $started = microtime(true);
        $error = $this->inFiber(static function () use ($pool, $marker): ?\Throwable {
            try {
                $pool->query("SELECT pg_sleep(30), '$marker'");
            } catch (StatementTimeoutException $e) {
                return $e;
            }

            return null;
        });
        self::assertInstanceOf(StatementTimeoutException::class, $error);
        // Else closing waited for the sleep to end (no ext-sockets), and what follows would prove nothing.
        self::assertLessThan(5.0, microtime(true) - $started, 'the statement was given up at its timeout');
        $server = $this->server();
        \assert($server instanceof PostgresServer);
        $admin = $server->admin();
        $running = -1;
        try {
            // The session checks every second that its client is there: it ends well before its 30 s sleep would.
            for ($deadline = microtime(true) + 6.0; microtime(true) < $deadline; usleep(100_000)) {
                $result = pg_query_params($admin, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%' || \$1 || '%' AND pid <> pg_backend_pid()", [$marker]);
                $running = $result === false ? -1 : (int) pg_fetch_result($result, 0, 0);
                if ($running === 0) {
                    break;
                }
            }
        } finally {
            pg_close($admin);
        }
        self::assertSame(0, $running, 'the statement of the closed connection still runs on the server');
    }

    public function testADuplicateKeyErrorSaysWhichKey(): void
    {
        $pool = $this->pool('max=1');
        $error = $this->inFiber(static function () use ($pool): ?QueryException {
            $pool->execute('CREATE TABLE IF NOT EXISTS keyed (id int PRIMARY KEY)');
            $pool->execute('INSERT INTO keyed VALUES (1) ON CONFLICT DO NOTHING');
            try {
                $pool->execute('INSERT INTO keyed VALUES ($1)', [1]);
            } catch (QueryException $e) {
                return $e;
            }

            return null;
        });
        self::assertInstanceOf(QueryException::class, $error);
        self::assertSame('23505', $error->sqlState);
        self::assertStringContainsString('Key (id)=(1) already exists', $error->getMessage(), 'the detail is part of the message');
    }

    public function testAPreparedStatementIsPreparedOncePerConnection(): void
    {
        $pool = $this->pool('max=1');
        $count = $this->inFiber(static function () use ($pool): mixed {
            for ($i = 0; $i < 3; $i++) {
                $pool->query('SELECT $1::int + 1 AS n', [$i]);
            }

            return $pool->query('SELECT count(*) AS c FROM pg_prepared_statements WHERE $1::bool', [true])->scalar();
        });
        self::assertSame(2, $count, 'one statement for the three selects, one for the count');
    }

    public function testAStreamWithParametersLeavesNoPreparedStatementBehind(): void
    {
        $pool = $this->pool('max=1');
        [$rows, $prepared] = $this->inFiber(static function () use ($pool): array {
            $rows = 0;
            for ($i = 0; $i < 20; $i++) {
                foreach ($pool->stream('SELECT i FROM generate_series(1, $1::int) i', [3]) as $row) {
                    $rows++;
                }
            }

            return [$rows, $pool->query('SELECT count(*) AS c FROM pg_prepared_statements WHERE $1::bool', [true])->scalar()];
        });
        self::assertSame(60, $rows);
        self::assertSame(1, $prepared, 'only the count itself is prepared, not a DECLARE per stream');
    }

    public function testACopyFromOrToTheClientIsRefusedAndTheWorkerGoesOn(): void
    {
        $pool = $this->pool('max=1');
        $outcomes = $this->inFiber(static function () use ($pool): array {
            $pool->execute('CREATE TABLE IF NOT EXISTS copied (v text)');
            $outcomes = [];
            foreach (['COPY copied TO STDOUT', 'COPY copied FROM STDIN'] as $sql) {
                try {
                    $pool->query($sql);
                    $outcomes[] = 'ran';
                } catch (\Error $e) {
                    $outcomes[] = str_contains($e->getMessage(), 'not supported') ? 'refused' : $e->getMessage();
                }
                $outcomes[] = $pool->query('SELECT 1 AS n')->scalar();
            }

            return $outcomes;
        });
        self::assertSame(['refused', 1, 'refused', 1], $outcomes, 'neither loops for ever nor takes the process down');
    }

    public function testAKeptStatementStillRunsAfterItsTableChangedShape(): void
    {
        $pool = $this->pool('max=1');
        [$before, $after, $inTransaction, $next] = $this->inFiber(static function () use ($pool): array {
            $pool->execute('CREATE TABLE migrated (id int PRIMARY KEY, a int)');
            $pool->execute('INSERT INTO migrated VALUES (1, 10)');
            $select = 'SELECT * FROM migrated WHERE id = $1';
            $before = $pool->query($select, [1])->first();
            $pool->execute('ALTER TABLE migrated ADD COLUMN b int DEFAULT 5');
            $after = $pool->query($select, [1])->first();
            $pool->execute('ALTER TABLE migrated DROP COLUMN a');
            try {
                $inTransaction = $pool->transaction(static fn(Transaction $tx) => $tx->query($select, [1])->first());
            } catch (QueryException $e) {
                $inTransaction = $e->sqlState;
            }

            return [$before, $after, $inTransaction, $pool->transaction(static fn(Transaction $tx) => $tx->query($select, [1])->first())];
        });
        self::assertSame(['id' => 1, 'a' => 10], $before);
        self::assertSame(['id' => 1, 'a' => 10, 'b' => 5], $after, 'prepared again and run, not "cached plan must not change result type"');
        self::assertSame('0A000', $inTransaction, 'inside a transaction the error stands: the transaction is aborted');
        self::assertSame(['id' => 1, 'b' => 5], $next, 'the next transaction prepares it afresh');
    }

    public function testNotificationsArriveFromAListen(): void
    {
        $server = $this->server();
        $pool = $this->pool();
        $received = $this->inFiber(static function () use ($pool, $server): array {
            $listener = (new PgConnector(Dsn::parse($server->url())))->listen('orders');
            $pool->execute("SELECT pg_notify('orders', 'first')");
            $pool->execute("NOTIFY orders, 'second'");
            $got = [$listener->next(), $listener->next()];
            $listener->close();

            return array_map(static fn($n): string => "$n->channel:$n->payload", $got);
        });
        self::assertSame(['orders:first', 'orders:second'], $received);
    }

    public function testClosingAListenerEndsTheIterationWaitingOnIt(): void
    {
        $server = $this->server();
        $ended = $this->inFiber(static function () use ($server): string {
            $listener = (new PgConnector(Dsn::parse($server->url())))->listen('quiet');
            $reader = async(static function () use ($listener): string {
                foreach ($listener as $notification) {
                    return "got {$notification->payload}";
                }

                return 'ended';
            });
            delay(0.05);
            $listener->close();

            return $reader->await();
        });
        self::assertSame('ended', $ended);
    }

    protected static function startServer(): PostgresServer
    {
        return PostgresServer::start();
    }

    protected function sleep(string $seconds): string
    {
        return "pg_sleep($seconds)";
    }

    protected function param(int $n): string
    {
        return "\$$n";
    }

    protected function intParam(int $n): string
    {
        return "\$$n::int";
    }

    protected function createAccounts(): string
    {
        return 'CREATE TABLE accounts (id serial PRIMARY KEY, name text UNIQUE, balance int)';
    }

    protected function uniqueViolationState(): string
    {
        return '23505';
    }

    protected function noSuchTableState(): string
    {
        return '42P01';
    }

    protected function hundredThousandPads(): string
    {
        return "SELECT i, repeat('x', 1000) AS pad FROM generate_series(1, 100000) i";
    }

    protected function killQueryContaining(string $text): bool
    {
        $server = $this->server();
        \assert($server instanceof PostgresServer);
        $admin = $server->admin();
        try {
            $result = pg_query_params($admin, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE '%' || \$1 || '%' AND pid <> pg_backend_pid()", [$text]);

            return $result !== false && pg_fetch_result($result, 0, 0) === '1';
        } finally {
            pg_close($admin);
        }
    }

    protected function wrongPasswordMessage(): string
    {
        return 'password authentication failed';
    }

    protected function sessionIdQuery(): string
    {
        return 'SELECT pg_backend_pid() AS id';
    }

    protected function endSession(int $id): void
    {
        $server = $this->server();
        \assert($server instanceof PostgresServer);
        $admin = $server->admin();
        try {
            pg_query_params($admin, 'SELECT pg_terminate_backend($1)', [$id]);
        } finally {
            pg_close($admin);
        }
    }
}
