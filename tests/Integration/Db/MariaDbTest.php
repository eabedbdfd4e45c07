<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Db;

use Kiln\Db\Binary;
use Kiln\Db\ConnectionException;
use Kiln\Db\Pool;
use Kiln\Db\QueryException;
use Kiln\Db\Transaction;

use function Kiln\Loop\all;
use function Kiln\Loop\async;
use function Kiln\Loop\await;

use Kiln\Loop\CancelledException;

use function Kiln\Loop\delay;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutCancellation;
use Kiln\Tests\Support\MariaDbServer;
use PHPUnit\Framework\TestCase;

/** Kiln\Db against a real MariaDB started for this class, through Kiln's own client of the MySQL protocol. */
final class MariaDbTest extends TestCase
{
    private static ?MariaDbServer $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = MariaDbServer::start();
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
    }

    public function testEveryParameterTypeNullsAndBinaryDataGoThroughAPreparedStatement(): void
    {
        $pool = $this->pool();
        $bytes = implode('', array_map('chr', range(0, 255)));
        [$row, $stored] = $this->inFiber(static function () use ($pool, $bytes): array {
            $pool->execute('CREATE TABLE typed (i BIGINT, u BIGINT UNSIGNED, f DOUBLE, t BOOL, s VARCHAR(50), bin BLOB, ts DATETIME(6), n INT, num DECIMAL(10,2), empty VARCHAR(5))');
            $insert = $pool->execute('INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [PHP_INT_MIN, PHP_INT_MAX, 2.5, true, "h\u{e9}llo 'quoted'", new Binary($bytes), new \DateTimeImmutable('2026-11-26 10:00:00.123456'), null, '1.10', '']);
            \assert($insert->affectedRows === 1);

            return [$pool->query('SELECT * FROM typed WHERE n IS NULL AND i = ?', [PHP_INT_MIN])->first(), $pool->query('SELECT * FROM typed')->first()];
        });
        foreach (['binary protocol' => $row, 'text protocol' => $stored] as $how => $values) {
            self::assertSame([
                'i' => PHP_INT_MIN, 'u' => PHP_INT_MAX, 'f' => 2.5, 't' => 1, 's' => "h\u{e9}llo 'quoted'", 'bin' => $bytes,
                'ts' => '2026-11-26 10:00:00.123456', 'n' => null, 'num' => '1.10', 'empty' => '',
            ], $values, $how);
        }
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

    public function testTwoHundredSleepsRunSideBySideOnOneProcessWithoutBlockingTheLoop(): void
    {
        $pool = $this->pool('max=200&wait=30');
        $this->inFiber(static fn() => all(array_map(static fn() => async(static fn() => $pool->query('SELECT SLEEP(0.2)')), range(1, 200))));
        self::assertSame(200, $pool->stats()['idle'], 'the pool is warm: 200 connections');
        $longestGap = 0.0;
        $ticks = Loop::repeat(0.01, static function () use (&$longestGap, &$last): void {
            $now = microtime(true);
            $longestGap = max($longestGap, $now - ($last ?? $now));
            $last = $now;
        });
        $started = microtime(true);
        $results = $this->inFiber(static function () use ($pool): array {
            $futures = [];
            for ($i = 0; $i < 200; $i++) {
                $futures[] = async(static fn() => $pool->query('SELECT SLEEP(1), ? AS i', [$i])->first()['i'] ?? null);
            }

            return all($futures);
        });
        $elapsed = microtime(true) - $started;
        Loop::cancel($ticks);
        self::assertSame(range(0, 199), $results);
        // Serial would take 200 s; the bound is generous for a loaded machine.
        self::assertLessThan(6.0, $elapsed, "200 one-second sleeps took $elapsed s");
        fwrite(STDERR, \sprintf("200 x SLEEP(1): %.2f s wall, longest loop gap %.3f s\n", $elapsed, $longestGap));
        self::assertLessThan(1.0, $longestGap, 'a timer kept firing while the sleeps ran');
        $pool->close();
    }

    public function testATransactionCommitsOrRollsBack(): void
    {
        $pool = $this->pool();
        $rows = $this->inFiber(static function () use ($pool): array {
            $pool->execute('CREATE TABLE accounts (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) UNIQUE, balance INT) ENGINE=InnoDB');
            $pool->transaction(static function (Transaction $tx): void {
                $tx->execute('INSERT INTO accounts (name, balance) VALUES (?, ?)', ['ann', 100]);
                $tx->execute('INSERT INTO accounts (name, balance) VALUES (?, ?)', ['bob', 50]);
            });
            try {
                $pool->transaction(static function (Transaction $tx): void {
                    $tx->execute('UPDATE accounts SET balance = balance - 70 WHERE name = ?', ['ann']);
                    $tx->execute('INSERT INTO accounts (name, balance) VALUES (?, ?)', ['bob', 0]); // unique violation
                });
            } catch (QueryException $e) {
                \assert($e->sqlState === '23000');
            }
            $updated = $pool->execute('UPDATE accounts SET balance = balance + 1');

            return [$updated->affectedRows, $pool->query('SELECT name, balance FROM accounts ORDER BY name')->rows];
        });
        self::assertSame([2, [['name' => 'ann', 'balance' => 101], ['name' => 'bob', 'balance' => 51]]], $rows);
    }

    public function testAServerErrorCarriesItsSqlstateAndTheConnectionStaysUsable(): void
    {
        $pool = $this->pool('max=1');
        [$error, $after] = $this->inFiber(static function () use ($pool): array {
            try {
                $pool->query('SELECT * FROM no_such_table');
            } catch (QueryException $e) {
                return [$e, $pool->query('SELECT 7 AS n')->scalar()];
            }
            throw new \LogicException('no error');
        });
        self::assertSame('42S02', $error->sqlState);
        self::assertStringContainsString('no_such_table', $error->getMessage());
        self::assertSame(7, $after);
    }

    public function testAKilledConnectionFailsOnlyItsQueryAndThePoolRecovers(): void
    {
        $server = $this->server();
        $pool = $this->pool('max=2');
        [$victim, $bystander, $after] = $this->inFiber(static function () use ($pool, $server): array {
            $victim = async(static fn() => $pool->query("SELECT SLEEP(30), 'victim'"));
            $bystander = async(static fn() => $pool->query("SELECT SLEEP(0.5), 'bystander' AS who")->first()['who'] ?? null);
            $admin = $server->admin();
            for ($i = 0; $i < 100; $i++) {
                $found = $admin->query("SELECT id FROM information_schema.processlist WHERE info LIKE '%SLEEP(30)%' AND id <> CONNECTION_ID()");
                $id = $found instanceof \mysqli_result ? ($found->fetch_row()[0] ?? null) : null;
                if (is_numeric($id)) {
                    $admin->query('KILL ' . (int) $id);
                    break;
                }
                delay(0.05);
            }
            $admin->close();
            try {
                $victim->await();
                $outcome = 'completed';
            } catch (\Throwable $e) {
                $outcome = $e;
            }

            return [$outcome, $bystander->await(), $pool->query('SELECT 42 AS n')->scalar()];
        });
        self::assertInstanceOf(ConnectionException::class, $victim);
        self::assertSame('bystander', $bystander);
        self::assertSame(42, $after);
        self::assertLessThanOrEqual(2, $pool->stats()['open']);
    }

    public function testAQueryCancelledHalfWayClosesItsConnectionAndTheNextQueryGetsAFreshOne(): void
    {
        $pool = $this->pool('max=1');
        [$error, $after, $stats] = $this->inFiber(static function () use ($pool): array {
            try {
                $pool->query('SELECT SLEEP(5)', [], new TimeoutCancellation(0.2));
                $error = null;
            } catch (CancelledException $e) {
                $error = $e;
            }

            return [$error, $pool->query('SELECT 5 AS n')->scalar(), $pool->stats()];
        });
        self::assertInstanceOf(CancelledException::class, $error);
        self::assertSame(5, $after, 'the answer of the cancelled sleep is never read as this one');
        self::assertSame(['open' => 1, 'idle' => 1, 'waiting' => 0], $stats);
    }

    public function testAHundredMegabyteResultIsStreamedInBoundedMemory(): void
    {
        $pool = $this->pool();
        $before = memory_get_usage();
        [$rows, $bytes, $peak] = $this->inFiber(static function () use ($pool, $before): array {
            $rows = 0;
            $bytes = 0;
            $peak = 0;
            foreach ($pool->stream("SELECT seq, REPEAT('x', 1000) AS pad FROM seq_1_to_100000") as $row) {
                $rows++;
                $bytes += \is_string($row['pad']) ? \strlen($row['pad']) : 0;
                if ($rows % 5000 === 0) {
                    $peak = max($peak, memory_get_usage() - $before);
                }
            }

            return [$rows, $bytes, $peak];
        });
        self::assertSame(100000, $rows);
        self::assertSame(100_000_000, $bytes);
        self::assertLessThan(16 * 1024 * 1024, $peak, 'at most a batch of rows is held at a time');
        self::assertSame(1, $this->inFiber(static fn() => $pool->query('SELECT 1 AS one')->scalar()), 'the connection is usable after the stream');
    }

    public function testAWrongPasswordIsAConnectionErrorThatDoesNotShowIt(): void
    {
        $url = str_replace(MariaDbServer::PASSWORD, 'not-the-pw-123', $this->server()->url());
        try {
            $this->inFiber(static fn() => Pool::fromDsn($url)->query('SELECT 1'));
            self::fail('connected with a wrong password');
        } catch (ConnectionException $e) {
            self::assertStringContainsString('[28000] Access denied', $e->getMessage());
            self::assertStringNotContainsString('not-the-pw-123', $e->getMessage());
            self::assertStringContainsString('mysql://kiln@127.0.0.1:', $e->getMessage());
        }
    }

    public function testTheUnixSocketWorks(): void
    {
        $pool = Pool::fromDsn($this->server()->socketUrl());
        self::assertSame('ok', $this->inFiber(static fn() => $pool->query("SELECT 'ok'")->scalar()));
    }

    public function testSeveralResultSetsInOneQueryGiveTheFirstsRowsAndTheLastsCounts(): void
    {
        $pool = $this->pool();
        $result = $this->inFiber(static fn() => $pool->query('SELECT 1 AS a UNION SELECT 2; SELECT 3 AS b; DO 0'));
        self::assertSame([['a' => 1], ['a' => 2]], $result->rows);
    }

    private function server(): MariaDbServer
    {
        return self::$server ?? throw new \LogicException('no server');
    }

    private function pool(string $options = ''): Pool
    {
        return Pool::fromDsn($this->server()->url($options));
    }

    /**
     * @template T
     *
     * @param \Closure(): T $fn
     *
     * @return T
     */
    private function inFiber(\Closure $fn): mixed
    {
        return await(async($fn));
    }
}
