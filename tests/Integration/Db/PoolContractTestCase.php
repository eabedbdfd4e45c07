<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Db;

use Kiln\Db\ConnectionException;
use Kiln\Db\Pool;
use Kiln\Db\QueryException;
use Kiln\Db\StatementTimeoutException;
use Kiln\Db\Transaction;

use function Kiln\Loop\all;
use function Kiln\Loop\async;
use function Kiln\Loop\await;

use Kiln\Loop\CancelledException;

use function Kiln\Loop\delay;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutCancellation;
use Kiln\Tests\Support\DbServer;
use PHPUnit\Framework\TestCase;

/**
 * What Kiln\Db promises on every server it speaks to, run by each server's test class against a real server
 * started for that class. The class says how its server spells a sleep, a parameter, a table and an error.
 */
abstract class PoolContractTestCase extends TestCase
{
    private static ?DbServer $server = null;

    abstract protected static function startServer(): DbServer;

    /** The server's call that sleeps $seconds, as an SQL expression. */
    abstract protected function sleep(string $seconds): string;

    /** The $n-th (from 1) parameter of a prepared statement. */
    abstract protected function param(int $n): string;

    /** The $n-th parameter, read as an integer. */
    abstract protected function intParam(int $n): string;

    /** CREATE TABLE accounts (id, name unique, balance) in the server's dialect. */
    abstract protected function createAccounts(): string;

    abstract protected function uniqueViolationState(): string;

    abstract protected function noSuchTableState(): string;

    /** A query of 100 000 rows, each with a column `pad` of 1000 bytes. */
    abstract protected function hundredThousandPads(): string;

    /** Ends the server's sessions running a query that contains $text; true when it ended one. */
    abstract protected function killQueryContaining(string $text): bool;

    /** What the server says when the password is wrong. */
    abstract protected function wrongPasswordMessage(): string;

    /** A query whose one column is the server's id of the session that runs it. */
    abstract protected function sessionIdQuery(): string;

    /** Ends the session $id from another connection, as a restart or an administrator would. */
    abstract protected function endSession(int $id): void;

    public static function setUpBeforeClass(): void
    {
        self::$server = static::startServer();
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

    public function testTwoHundredSleepsRunSideBySideOnOneProcessWithoutBlockingTheLoop(): void
    {
        $pool = $this->pool('max=200&wait=30');
        $warm = 'SELECT ' . $this->sleep('0.2');
        $this->inFiber(static fn() => all(array_map(static fn() => async(static fn() => $pool->query($warm)), range(1, 200))));
        self::assertSame(200, $pool->stats()['idle'], 'the pool is warm: 200 connections');
        $longestGap = 0.0;
        $ticks = Loop::repeat(0.01, static function () use (&$longestGap, &$last): void {
            $now = microtime(true);
            $longestGap = max($longestGap, $now - ($last ?? $now));
            $last = $now;
        });
        $started = microtime(true);
        $sleep = 'SELECT ' . $this->sleep('1') . ', ' . $this->intParam(1) . ' AS i';
        $results = $this->inFiber(static function () use ($pool, $sleep): array {
            $futures = [];
            for ($i = 0; $i < 200; $i++) {
                $futures[] = async(static fn() => $pool->query($sleep, [$i])->first()['i'] ?? null);
            }

            return all($futures);
        });
        $elapsed = microtime(true) - $started;
        Loop::cancel($ticks);
        self::assertSame(range(0, 199), $results);
        // Serial would take 200 s; the bound is generous for a loaded machine.
        self::assertLessThan(6.0, $elapsed, "200 one-second sleeps took $elapsed s");
        fwrite(STDERR, \sprintf("200 x %s: %.2f s wall, longest loop gap %.3f s\n", $this->sleep('1'), $elapsed, $longestGap));
        self::assertLessThan(1.0, $longestGap, 'a timer kept firing while the sleeps ran');
        $pool->close();
    }

    public function testATransactionCommitsOrRollsBack(): void
    {
        $pool = $this->pool();
        $create = $this->createAccounts();
        $insert = 'INSERT INTO accounts (name, balance) VALUES (' . $this->param(1) . ', ' . $this->param(2) . ')';
        $withdraw = 'UPDATE accounts SET balance = balance - 70 WHERE name = ' . $this->param(1);
        [$refused, $rows] = $this->inFiber(static function () use ($pool, $create, $insert, $withdraw): array {
            $pool->execute($create);
            $pool->transaction(static function (Transaction $tx) use ($insert): void {
                $tx->execute($insert, ['ann', 100]);
                $tx->execute($insert, ['bob', 50]);
            });
            $refused = null;
            try {
                $pool->transaction(static function (Transaction $tx) use ($insert, $withdraw): void {
                    $tx->execute($withdraw, ['ann']);
                    $tx->execute($insert, ['bob', 0]); // unique violation
                });
            } catch (QueryException $e) {
                $refused = $e->sqlState;
            }
            $updated = $pool->execute('UPDATE accounts SET balance = balance + 1');

            return [$refused, [$updated->affectedRows, $pool->query('SELECT name, balance FROM accounts ORDER BY name')->rows]];
        });
        self::assertSame($this->uniqueViolationState(), $refused, 'the second transaction failed on the unique key');
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
        self::assertSame($this->noSuchTableState(), $error->sqlState);
        self::assertStringContainsString('no_such_table', $error->getMessage());
        self::assertSame(7, $after);
    }

    public function testAKilledConnectionFailsOnlyItsQueryAndThePoolRecovers(): void
    {
        $pool = $this->pool('max=2');
        $victimSql = 'SELECT ' . $this->sleep('30') . ", 'victim'";
        $bystanderSql = 'SELECT ' . $this->sleep('0.5') . ", 'bystander' AS who";
        $kill = $this->killQueryContaining(...);
        $marker = $this->sleep('30');
        [$victim, $bystander, $after] = $this->inFiber(static function () use ($pool, $victimSql, $bystanderSql, $kill, $marker): array {
            $victim = async(static fn() => $pool->query($victimSql));
            $bystander = async(static fn() => $pool->query($bystanderSql)->first()['who'] ?? null);
            for ($i = 0; $i < 100 && !$kill($marker); $i++) {
                delay(0.05);
            }
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
        $sleep = 'SELECT ' . $this->sleep('5');
        [$error, $after, $stats] = $this->inFiber(static function () use ($pool, $sleep): array {
            try {
                $pool->query($sleep, [], new TimeoutCancellation(0.2));
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

    public function testAStatementPastTheTimeoutOfTheUrlEndsWithAClearErrorAndThePoolGoesOn(): void
    {
        $pool = $this->pool('max=1&timeout=0.3');
        $sleep = 'SELECT ' . $this->sleep('5');
        $started = microtime(true);
        [$error, $elapsed, $after, $stats] = $this->inFiber(static function () use ($pool, $sleep, $started): array {
            try {
                $pool->query($sleep);
                $error = null;
            } catch (StatementTimeoutException $e) {
                $error = $e;
            }
            $elapsed = microtime(true) - $started;

            return [$error, $elapsed, $pool->query('SELECT 5 AS n')->scalar(), $pool->stats()];
        });
        self::assertInstanceOf(StatementTimeoutException::class, $error);
        self::assertStringContainsString('ran past the statement timeout of 0.3 s', $error->getMessage());
        $password = rawurldecode((string) parse_url($this->server()->url(), PHP_URL_PASS));
        self::assertNotSame('', $password);
        self::assertStringNotContainsString($password, $error->getMessage());
        self::assertLessThan(2.0, $elapsed, "the statement was given up after $elapsed s, not at its timeout");
        self::assertSame(5, $after, 'the answer of the sleep given up is never read as this one');
        self::assertSame(['open' => 1, 'idle' => 1, 'waiting' => 0], $stats);
    }

    public function testAStreamWhoseRowsDoNotComeWithinTheTimeoutEndsWithAClearErrorAndThePoolGoesOn(): void
    {
        $pool = $this->pool('max=1&timeout=0.3');
        $sleep = 'SELECT ' . $this->sleep('5') . ' AS s';
        $started = microtime(true);
        [$error, $rows, $elapsed] = $this->inFiber(static function () use ($pool, $sleep, $started): array {
            $rows = [];
            try {
                foreach ($pool->stream($sleep) as $row) {
                    $rows[] = $row;
                }
                $error = null;
            } catch (StatementTimeoutException $e) {
                $error = $e;
            }

            return [$error, $rows, microtime(true) - $started];
        });
        self::assertInstanceOf(StatementTimeoutException::class, $error);
        self::assertSame([], $rows);
        self::assertLessThan(2.0, $elapsed, "the stream was given up after $elapsed s, not at its timeout");
        $three = 'SELECT ' . $this->sleep('0.05') . ' AS s UNION ALL SELECT ' . $this->sleep('0.05') . ' UNION ALL SELECT ' . $this->sleep('0.05');
        $counted = $this->inFiber(static function () use ($pool, $three): int {
            $count = 0;
            foreach ($pool->stream($three) as $row) {
                $count++;
                delay(0.4); // past the timeout, between rows: the caller's time, not the server's
            }

            return $count;
        });
        self::assertSame(3, $counted);
        self::assertSame(5, $this->inFiber(static fn() => $pool->query('SELECT 5 AS n')->scalar()));
    }

    public function testParametersOfAWrongTypeAreATypeErrorAndTheConnectionStaysOpen(): void
    {
        $pool = $this->pool('max=1');
        $sessionId = $this->sessionIdQuery();
        $param = $this->intParam(1);
        [$before, $error, $after] = $this->inFiber(static function () use ($pool, $sessionId, $param): array {
            $before = $pool->query($sessionId)->scalar();
            try {
                $pool->query("SELECT $param AS n", [new \stdClass()]);
                $error = null;
            } catch (\TypeError $e) {
                $error = $e;
            }

            return [$before, $error, $pool->query($sessionId)->scalar()];
        });
        self::assertInstanceOf(\TypeError::class, $error);
        self::assertSame($before, $after, 'the same connection serves the next query');
    }

    public function testACancelledQueryEndsAtOnceWithoutHoldingTheLoop(): void
    {
        $pool = $this->pool('max=1');
        $sleep = 'SELECT ' . $this->sleep('4');
        $longestGap = 0.0;
        $ticks = Loop::repeat(0.01, static function () use (&$longestGap, &$last): void {
            $now = microtime(true);
            $longestGap = max($longestGap, $now - ($last ?? $now));
            $last = $now;
        });
        $started = microtime(true);
        $error = $this->inFiber(static function () use ($pool, $sleep): ?\Throwable {
            try {
                $pool->query($sleep, [], new TimeoutCancellation(0.2));
            } catch (CancelledException $e) {
                return $e;
            }

            return null;
        });
        $elapsed = microtime(true) - $started;
        Loop::cancel($ticks);
        self::assertInstanceOf(CancelledException::class, $error);
        self::assertLessThan(2.0, $elapsed, "the cancelled query returned after $elapsed s, not when cancelled");
        self::assertLessThan(1.0, $longestGap, 'closing the cancelled connection held the loop');
        self::assertSame(3, $this->inFiber(static fn() => $pool->query('SELECT 3 AS n')->scalar()));
    }

    public function testAnIdleConnectionTheServerEndedIsReplacedNotHandedOut(): void
    {
        $pool = $this->pool('max=1');
        $sessionId = $this->sessionIdQuery();
        $first = $this->inFiber(static fn() => $pool->query($sessionId)->scalar());
        self::assertIsInt($first);
        $this->endSession($first);
        $second = $this->inFiber(static function () use ($pool, $sessionId): mixed {
            delay(0.3); // the server's close reaches the idle socket

            return $pool->query($sessionId)->scalar();
        });
        self::assertIsInt($second, 'the query ran on a new connection, not on the dead one');
        self::assertNotSame($first, $second);
        self::assertSame(['open' => 1, 'idle' => 1, 'waiting' => 0], $pool->stats());
    }

    public function testAHundredMegabyteResultIsStreamedInBoundedMemory(): void
    {
        $pool = $this->pool();
        $sql = $this->hundredThousandPads();
        $before = memory_get_usage();
        [$rows, $bytes, $peak] = $this->inFiber(static function () use ($pool, $sql, $before): array {
            $rows = 0;
            $bytes = 0;
            $peak = 0;
            foreach ($pool->stream($sql) as $row) {
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
        $url = $this->server()->url();
        $password = rawurldecode((string) parse_url($url, PHP_URL_PASS));
        self::assertNotSame('', $password, 'the test server has a password');
        $wrong = str_replace($password, 'not-the-pw-123', $url);
        try {
            $this->inFiber(static fn() => Pool::fromDsn($wrong)->query('SELECT 1'));
            self::fail('connected with a wrong password');
        } catch (ConnectionException $e) {
            self::assertStringContainsString($this->wrongPasswordMessage(), $e->getMessage());
            self::assertStringNotContainsString('not-the-pw-123', $e->getMessage());
            self::assertStringContainsString(parse_url($url, PHP_URL_SCHEME) . '://kiln@127.0.0.1:', $e->getMessage());
        }
    }

    public function testTheUnixSocketWorks(): void
    {
        $pool = Pool::fromDsn($this->server()->socketUrl());
        self::assertSame('ok', $this->inFiber(static fn() => $pool->query("SELECT 'ok'")->scalar()));
    }

    protected function server(): DbServer
    {
        return self::$server ?? throw new \LogicException('no server');
    }

    protected function pool(string $options = ''): Pool
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
    protected function inFiber(\Closure $fn): mixed
    {
        return await(async($fn));
    }
}
