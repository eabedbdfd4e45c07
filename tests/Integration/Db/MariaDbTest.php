<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Db;

use Kiln\Db\Binary;
use Kiln\Db\ConnectionException;
use Kiln\Db\QueryException;
use Kiln\Db\Transaction;
use Kiln\Tests\Support\MariaDbServer;

/** Kiln\Db against a real MariaDB started for this class, through Kiln's own client of the MySQL protocol. */
final class MariaDbTest extends PoolContractTestCase
{
    public function testEveryParameterTypeNullsAndBinaryDataGoThroughAPreparedStatement(): void
    {
        $pool = $this->pool();
        $bytes = implode('', array_map('chr', range(0, 255)));
        [$inserted, $row, $stored] = $this->inFiber(static function () use ($pool, $bytes): array {
            $pool->execute('CREATE TABLE typed (i BIGINT, u BIGINT UNSIGNED, f DOUBLE, t BOOL, s VARCHAR(50), bin BLOB, ts DATETIME(6), n INT, num DECIMAL(10,2), empty VARCHAR(5))');
            $insert = $pool->execute('INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [PHP_INT_MIN, PHP_INT_MAX, 2.5, true, "h\u{e9}llo 'quoted'", new Binary($bytes), new \DateTimeImmutable('2026-11-26 10:00:00.123456'), null, '1.10', '']);

            return [$insert->affectedRows, $pool->query('SELECT * FROM typed WHERE n IS NULL AND i = ?', [PHP_INT_MIN])->first(), $pool->query('SELECT * FROM typed')->first()];
        });
        self::assertSame(1, $inserted);
        foreach (['binary protocol' => $row, 'text protocol' => $stored] as $how => $values) {
            self::assertSame([
                'i' => PHP_INT_MIN, 'u' => PHP_INT_MAX, 'f' => 2.5, 't' => 1, 's' => "h\u{e9}llo 'quoted'", 'bin' => $bytes,
                'ts' => '2026-11-26 10:00:00.123456', 'n' => null, 'num' => '1.10', 'empty' => '',
            ], $values, $how);
        }
    }

    public function testAServerErrorCarriesMysqlsErrorNumber(): void
    {
        $pool = $this->pool('max=1');
        $errors = $this->inFiber(static function () use ($pool): array {
            $pool->execute('CREATE TABLE IF NOT EXISTS keyed (id INT PRIMARY KEY)');
            $pool->execute('INSERT IGNORE INTO keyed VALUES (1)');
            $errors = [];
            foreach (['INSERT INTO keyed VALUES (1)', 'SELEC 1'] as $sql) {
                try {
                    $pool->execute($sql);
                } catch (QueryException $e) {
                    $errors[] = [$e->sqlState, $e->getCode()];
                }
            }
            try {
                $pool->execute('INSERT INTO keyed VALUES (?)', [1]);
            } catch (QueryException $e) {
                $errors[] = [$e->sqlState, $e->getCode()];
            }

            return $errors;
        });
        self::assertSame([['23000', 1062], ['42000', 1064], ['23000', 1062]], $errors, 'getCode() is the error number, from a query and a prepared statement');
    }

    public function testTheWrongNumberOfParametersIsAValueErrorAndTheConnectionStaysOpen(): void
    {
        $pool = $this->pool('max=1');
        [$before, $error, $after] = $this->inFiber(static function () use ($pool): array {
            $before = $pool->query('SELECT CONNECTION_ID() AS id')->scalar();
            try {
                $pool->query('SELECT ? AS a', [1, 2]);
                $error = null;
            } catch (\ValueError $e) {
                $error = $e;
            }

            return [$before, $error, $pool->query('SELECT CONNECTION_ID() AS id')->scalar()];
        });
        self::assertInstanceOf(\ValueError::class, $error);
        self::assertSame($before, $after, 'the same connection serves the next query');
    }

    public function testAParameterAboveMaxAllowedPacketIsReportedAsTheServerSaysIt(): void
    {
        $server = $this->server();
        \assert($server instanceof MariaDbServer);
        $admin = $server->admin();
        $result = $admin->query('SELECT @@global.max_allowed_packet');
        $was = (int) ($result instanceof \mysqli_result ? ($result->fetch_row()[0] ?? 0) : 0);
        $admin->query('SET GLOBAL max_allowed_packet = 1048576'); // for connections opened from now on
        try {
            $pool = $this->pool('max=1');
            $big = str_repeat('x', 16 * 1024 * 1024);
            $error = $this->inFiber(static function () use ($pool, $big): ?ConnectionException {
                try {
                    $pool->query('SELECT LENGTH(?) AS n', [$big]);
                } catch (ConnectionException $e) {
                    return $e;
                }

                return null;
            });
        } finally {
            $admin->query('SET GLOBAL max_allowed_packet = ' . $was);
            $admin->close();
        }
        self::assertInstanceOf(ConnectionException::class, $error);
        self::assertStringContainsString("Got a packet bigger than 'max_allowed_packet' bytes", $error->getMessage(), 'not just a failed write');
    }

    public function testAStreamLeftUnfinishedInATransactionSaysTheTransactionIsGone(): void
    {
        $pool = $this->pool('max=1');
        $error = $this->inFiber(static function () use ($pool): ?\Throwable {
            try {
                $pool->transaction(static function (Transaction $tx): void {
                    foreach ($tx->stream('SELECT seq FROM seq_1_to_10000') as $row) {
                        break; // the rest of the result is still on the wire: the connection is closed
                    }
                    $tx->query('SELECT 1');
                });
            } catch (\Throwable $e) {
                return $e;
            }

            return null;
        });
        self::assertInstanceOf(ConnectionException::class, $error);
        self::assertStringContainsString('rolled the transaction back', $error->getMessage());
        self::assertSame(1, $this->inFiber(static fn() => $pool->query('SELECT 1 AS n')->scalar()), 'the pool goes on with a new connection');
    }

    public function testAPreparedStatementIsPreparedOncePerConnection(): void
    {
        $pool = $this->pool('max=1');
        $count = $this->inFiber(static function () use ($pool): mixed {
            for ($i = 0; $i < 3; $i++) {
                $pool->query('SELECT ? + 1 AS n', [$i]);
            }

            return $pool->query("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")->first()['Value'] ?? null;
        });
        self::assertSame('1', $count);
    }

    public function testSeveralResultSetsInOneQueryGiveTheFirstsRowsAndTheLastsCounts(): void
    {
        $pool = $this->pool();
        $result = $this->inFiber(static fn() => $pool->query('SELECT 1 AS a UNION SELECT 2; SELECT 3 AS b; DO 0'));
        self::assertSame([['a' => 1], ['a' => 2]], $result->rows);
    }

    protected static function startServer(): MariaDbServer
    {
        return MariaDbServer::start();
    }

    protected function sleep(string $seconds): string
    {
        return "SLEEP($seconds)";
    }

    protected function param(int $n): string
    {
        return '?';
    }

    protected function intParam(int $n): string
    {
        return '?';
    }

    protected function createAccounts(): string
    {
        return 'CREATE TABLE accounts (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) UNIQUE, balance INT) ENGINE=InnoDB';
    }

    protected function uniqueViolationState(): string
    {
        return '23000';
    }

    protected function noSuchTableState(): string
    {
        return '42S02';
    }

    protected function hundredThousandPads(): string
    {
        return "SELECT seq, REPEAT('x', 1000) AS pad FROM seq_1_to_100000";
    }

    protected function killQueryContaining(string $text): bool
    {
        $server = $this->server();
        \assert($server instanceof MariaDbServer);
        $admin = $server->admin();
        try {
            $found = $admin->query("SELECT id FROM information_schema.processlist WHERE info LIKE '%" . $admin->real_escape_string($text) . "%' AND id <> CONNECTION_ID()");
            $id = $found instanceof \mysqli_result ? ($found->fetch_row()[0] ?? null) : null;
            if (!is_numeric($id)) {
                return false;
            }
            $admin->query('KILL ' . (int) $id);

            return true;
        } finally {
            $admin->close();
        }
    }

    protected function wrongPasswordMessage(): string
    {
        return '[28000] Access denied';
    }

    protected function sessionIdQuery(): string
    {
        return 'SELECT CONNECTION_ID() AS id';
    }

    protected function endSession(int $id): void
    {
        $server = $this->server();
        \assert($server instanceof MariaDbServer);
        $admin = $server->admin();
        try {
            $admin->query('KILL ' . $id);
        } finally {
            $admin->close();
        }
    }
}
