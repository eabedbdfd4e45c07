<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Db;

use Kiln\Db\Binary;
use Kiln\Db\ConnectionException;
use Kiln\Db\Dsn;
use Kiln\Db\Pool;
use Kiln\Db\Postgres\PgConnector;
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
use Kiln\Tests\Support\PostgresServer;
use PHPUnit\Framework\TestCase;

/** Kiln\Db against a real PostgreSQL 15 started for this class. */
final class PostgresTest extends TestCase
{
    private static ?PostgresServer $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = PostgresServer::start();
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

    public function testTwoHundredSleepsRunSideBySideOnOneProcessWithoutBlockingTheLoop(): void
    {
        $pool = $this->pool('max=200&wait=30');
        $this->inFiber(static fn() => all(array_map(static fn() => async(static fn() => $pool->query('SELECT pg_sleep(0.2)')), range(1, 200))));
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
                $futures[] = async(static fn() => $pool->query('SELECT pg_sleep(1), $1::int AS i', [$i])->first()['i'] ?? null);
            }

            return all($futures);
        });
        $elapsed = microtime(true) - $started;
        Loop::cancel($ticks);
        self::assertSame(range(0, 199), $results);
        // Serial would take 200 s; the bound is generous for a loaded machine.
        self::assertLessThan(6.0, $elapsed, "200 one-second sleeps took $elapsed s");
        fwrite(STDERR, \sprintf("200 x pg_sleep(1): %.2f s wall, longest loop gap %.3f s\n", $elapsed, $longestGap));
        self::assertLessThan(1.0, $longestGap, 'a timer kept firing while the sleeps ran');
        $pool->close();
    }

    public function testATransactionCommitsOrRollsBack(): void
    {
        $pool = $this->pool();
        $rows = $this->inFiber(static function () use ($pool): array {
            $pool->execute('CREATE TABLE accounts (id serial PRIMARY KEY, name text UNIQUE, balance int)');
            $pool->transaction(static function (Transaction $tx): void {
                $tx->execute('INSERT INTO accounts (name, balance) VALUES ($1, $2)', ['ann', 100]);
                $tx->execute('INSERT INTO accounts (name, balance) VALUES ($1, $2)', ['bob', 50]);
            });
            try {
                $pool->transaction(static function (Transaction $tx): void {
                    $tx->execute('UPDATE accounts SET balance = balance - 70 WHERE name = $1', ['ann']);
                    $tx->execute('INSERT INTO accounts (name, balance) VALUES ($1, $2)', ['bob', 0]); // unique violation
                });
            } catch (QueryException $e) {
                \assert($e->sqlState === '23505');
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
        self::assertSame('42P01', $error->sqlState);
        self::assertStringContainsString('no_such_table', $error->getMessage());
        self::assertSame(7, $after);
    }

    public function testAKilledConnectionFailsOnlyItsQueryAndThePoolRecovers(): void
    {
        $server = $this->server();
        $pool = $this->pool('max=2');
        [$victim, $bystander, $after] = $this->inFiber(static function () use ($pool, $server): array {
            $victim = async(static fn() => $pool->query("SELECT pg_sleep(30), 'victim'"));
            $bystander = async(static fn() => $pool->query("SELECT pg_sleep(0.5), 'bystander' AS who")->first()['who'] ?? null);
            $admin = $server->admin();
            for ($i = 0; $i < 100; $i++) {
                $result = pg_query($admin, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()");
                $killed = $result === false ? null : pg_fetch_result($result, 0, 0);
                if ($killed === '1') {
                    break;
                }
                delay(0.05);
            }
            pg_close($admin);
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
                $pool->query('SELECT pg_sleep(5)', [], new TimeoutCancellation(0.2));
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
            foreach ($pool->stream("SELECT i, repeat('x', 1000) AS pad FROM generate_series(1, 100000) i") as $row) {
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
        $url = str_replace(PostgresServer::PASSWORD, 'not-the-pw-123', $this->server()->url());
        try {
            $this->inFiber(static fn() => Pool::fromDsn($url)->query('SELECT 1'));
            self::fail('connected with a wrong password');
        } catch (ConnectionException $e) {
            self::assertStringContainsString('password authentication failed', $e->getMessage());
            self::assertStringNotContainsString('not-the-pw-123', $e->getMessage());
            self::assertStringContainsString('postgres://kiln@127.0.0.1:', $e->getMessage());
        }
    }

    public function testTheUnixSocketWorks(): void
    {
        $pool = Pool::fromDsn($this->server()->socketUrl());
        self::assertSame('ok', $this->inFiber(static fn() => $pool->query("SELECT 'ok'")->scalar()));
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

    private function server(): PostgresServer
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
