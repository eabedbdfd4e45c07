<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db;

use Kiln\Db\ConnectionException;
use Kiln\Db\Pool;
use Kiln\Db\PoolState;
use Kiln\Db\PoolTimeoutException;
use Kiln\Db\QueryException;
use Kiln\Db\StatementTimeoutException;
use Kiln\Db\Transaction;

use function Kiln\Loop\all;
use function Kiln\Loop\async;
use function Kiln\Loop\await;

use Kiln\Loop\CancelledException;

use function Kiln\Loop\delay;

use Kiln\Loop\Internal\AbstractDriver;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutCancellation;
use Kiln\Tests\Unit\Loop\LoopTestCase;

final class PoolTest extends LoopTestCase
{
    private FakeConnector $connector;

    protected function setUp(): void
    {
        parent::setUp();
        $this->connector = new FakeConnector();
    }

    public function testNoMoreThanMaxConnectionsOpenAndWaitersGetTheOnesGivenBack(): void
    {
        $pool = new Pool($this->connector, max: 2);
        $futures = [];
        for ($i = 0; $i < 6; $i++) {
            $futures[] = async(static fn() => $pool->query('SLEEP 0.02')->first()['connection'] ?? null);
        }
        $used = await(async(static fn() => all($futures)));
        self::assertCount(2, $this->connector->opened);
        self::assertSame([1, 2, 1, 2, 1, 2], $used, 'each connection given back goes to the longest waiter');
        self::assertSame(['open' => 2, 'idle' => 2, 'waiting' => 0], $pool->stats());
    }

    public function testWaitingLongerThanTheWaitTimeoutIsAClearError(): void
    {
        $pool = new Pool($this->connector, max: 1, waitTimeout: 0.05);
        $slow = async(static fn() => $pool->query('SLEEP 0.3'));
        try {
            await(async(static fn() => $pool->query('SELECT 1')));
            self::fail('the second query waited forever');
        } catch (PoolTimeoutException $e) {
            self::assertStringContainsString('No connection to fake://user@db was free within 0.1 s (all 1 busy)', $e->getMessage());
        }
        await($slow);
        self::assertSame(['open' => 1, 'idle' => 1, 'waiting' => 0], $pool->stats(), 'the waiter left the queue');
    }

    public function testIdleConnectionsAreClosedAfterTheIdleTimeout(): void
    {
        $pool = new Pool($this->connector, max: 3, idleTimeout: 0.05);
        await(async(static fn() => all([async(static fn() => $pool->query('SLEEP 0.01')), async(static fn() => $pool->query('SLEEP 0.01'))])));
        self::assertSame(2, $pool->stats()['idle']);
        await(async(static fn() => delay(0.3)));
        self::assertSame(['open' => 0, 'idle' => 0, 'waiting' => 0], $pool->stats());
        self::assertTrue($this->connector->opened[0]->closed && $this->connector->opened[1]->closed);
        $this->runGuarded(); // the idle timer does not keep the loop alive
    }

    public function testABrokenConnectionIsDiscardedAndNeverHandedOutAgain(): void
    {
        $pool = new Pool($this->connector, max: 1);
        $this->expectFailure(ConnectionException::class, static fn() => $pool->query('LOSE'));
        self::assertTrue($this->connector->opened[0]->closed);
        $row = await(async(static fn() => $pool->query('SELECT 1')->first()));
        self::assertSame(2, $row['connection'] ?? null, 'a new connection was opened');
    }

    public function testAFailedConnectGivesItsPlaceBack(): void
    {
        $connector = new FailingConnector();
        $pool = new Pool($connector, max: 1, waitTimeout: 0.5);
        $first = async(static fn() => $pool->query('SELECT 1'));
        $second = async(static fn() => $pool->query('SELECT 1')); // waits: the first holds the only place
        $this->expectFailure(ConnectionException::class, static fn() => $first->await());
        $this->expectFailure(ConnectionException::class, static fn() => $second->await());
        self::assertSame(2, $connector->attempts, 'the waiter tried to connect itself instead of waiting out its timeout');
        self::assertSame(['open' => 0, 'idle' => 0, 'waiting' => 0], $pool->stats());
    }

    public function testAServerErrorKeepsTheConnection(): void
    {
        $pool = new Pool($this->connector, max: 1);
        $error = $this->expectFailure(QueryException::class, static fn() => $pool->query('FAIL'));
        self::assertInstanceOf(QueryException::class, $error);
        self::assertSame('42000', $error->sqlState);
        self::assertSame(1, await(async(static fn() => $pool->query('SELECT 1')->first()['connection'] ?? null)));
    }

    public function testAQueryCancelledHalfWayDiscardsItsConnection(): void
    {
        $pool = new Pool($this->connector, max: 1);
        $this->expectFailure(CancelledException::class, static fn() => $pool->query('SLEEP 5', [], new TimeoutCancellation(0.02)));
        self::assertTrue($this->connector->opened[0]->closed, 'a half-read connection is closed');
        self::assertSame(2, await(async(static fn() => $pool->query('SELECT 1')->first()['connection'] ?? null)));
    }

    public function testAStatementPastTheStatementTimeoutIsGivenUpWithAClearErrorAndItsConnectionClosed(): void
    {
        $pool = new Pool($this->connector, max: 1, timeout: 0.05);
        $started = microtime(true);
        $error = $this->expectFailure(StatementTimeoutException::class, static fn() => $pool->query('SLEEP 5'));
        self::assertLessThan(1.0, microtime(true) - $started, 'the caller was let go at the timeout');
        self::assertSame('A statement on fake://user@db ran past the statement timeout of 0.05 s (the `timeout` option of the database URL;'
            . ' 0 turns it off): its connection was closed, and the server may still finish it', $error->getMessage());
        self::assertInstanceOf(CancelledException::class, $error->getPrevious());
        self::assertTrue($this->connector->opened[0]->closed, 'a half-read connection is closed');
        self::assertSame(2, await(async(static fn() => $pool->query('SELECT 1')->first()['connection'] ?? null)));
        self::assertSame(['open' => 1, 'idle' => 1, 'waiting' => 0], $pool->stats());
    }

    public function testAStatementWithinTheTimeoutRunsAndItsTimerKeepsNothingAlive(): void
    {
        $pool = new Pool($this->connector, max: 1, timeout: 0.2);
        self::assertSame(1, await(async(static fn() => $pool->query('SLEEP 0.05')->first()['connection'] ?? null)));
        self::assertSame(1, await(async(static fn() => $pool->query('SLEEP 0.05')->first()['connection'] ?? null)), 'the same connection, kept');
        $this->connector->log = [];
        delay(0.3); // past the first statement's deadline: nothing fires on the connection it kept
        self::assertFalse($this->connector->opened[0]->closed);
        self::assertSame(1, await(async(static fn() => $pool->query('SELECT 1')->first()['connection'] ?? null)));
        $long = new Pool($this->connector, max: 1, timeout: 60.0);
        await(async(static fn() => $long->query('SLEEP 0.01')));
        $this->runGuarded(1.0); // a deadline left referenced would hold the loop for its minute
    }

    public function testWhenThePoolsDeadlineAndTheCallersFireInOneLoopTurnTheFirstDueIsTheOneReported(): void
    {
        $pool = new Pool($this->connector, max: 1, timeout: 0.05);
        $error = $this->expectFailure(StatementTimeoutException::class, static function () use ($pool): void {
            Loop::delay(0.01, static function (): void {
                usleep(100_000); // a busy loop turn: both deadlines are past when the next one begins
            });
            $pool->query('SLEEP 5', [], new TimeoutCancellation(0.0502, 'mine'));
        });
        self::assertStringContainsString('statement timeout of 0.05 s', $error->getMessage());
        $pool = new Pool($this->connector, max: 1, timeout: 0.0502);
        $error = $this->expectFailure(CancelledException::class, static function () use ($pool): void {
            Loop::delay(0.01, static function (): void {
                usleep(100_000);
            });
            $pool->query('SLEEP 5', [], new TimeoutCancellation(0.05, 'mine'));
        });
        self::assertSame('mine', $error->getMessage(), 'the caller\'s, due first, as it threw it');
    }

    public function testTheCallersOwnCancellationKeepsItsExceptionWhenItFiresFirst(): void
    {
        $pool = new Pool($this->connector, max: 1, timeout: 5.0);
        $error = $this->expectFailure(CancelledException::class, static fn() => $pool->query('SLEEP 5', [], new TimeoutCancellation(0.02, 'mine')));
        self::assertNotInstanceOf(StatementTimeoutException::class, $error);
        self::assertSame('mine', $error->getMessage());
    }

    public function testEveryStatementOfATransactionIsBoundedAndTheTransactionGivenUp(): void
    {
        $pool = new Pool($this->connector, max: 1, timeout: 0.05);
        $this->expectFailure(StatementTimeoutException::class, static fn() => $pool->transaction(static function (Transaction $tx): void {
            $tx->query('SELECT 1');
            $tx->query('SLEEP 5');
        }));
        self::assertSame(['#1 BEGIN', '#1 SELECT 1', '#1 SLEEP 5'], $this->connector->log, 'no ROLLBACK on a connection half-read: it is closed');
        self::assertTrue($this->connector->opened[0]->closed);
        self::assertSame(2, await(async(static fn() => $pool->query('SELECT 1')->first()['connection'] ?? null)));
    }

    public function testAStreamsWaitsForTheServerAreBoundedButNotTheCallersTimeBetweenRows(): void
    {
        $pool = new Pool($this->connector, max: 1, timeout: 0.08);
        // Longer than the timeout, between rows: the caller's own time.
        self::assertSame([1, 2, 3], self::streamed($pool, 'SLOW 0.03', static fn() => delay(0.1)));
        // Waits of 0.05 s two hundredths apart: the timer armed at the first falls inside the second, which is not over.
        self::assertSame([1, 2, 3], self::streamed($pool, 'SLOW 0.05', static fn() => delay(0.02)));
        // The caller's time between rows counts for nothing even when it blocks the loop meanwhile.
        self::assertSame([1, 2, 3], self::streamed($pool, 'SLOW 0.05', static fn() => usleep(60_000)));
        self::assertFalse($this->connector->opened[0]->closed);
    }

    /**
     * The `i` of each row of a stream, with $between run after each.
     *
     * @param \Closure(): mixed $between
     * @return list<mixed>
     */
    private static function streamed(Pool $pool, string $sql, \Closure $between): array
    {
        return await(async(static function () use ($pool, $sql, $between): array {
            $rows = [];
            foreach ($pool->stream($sql) as $row) {
                $rows[] = $row['i'];
                $between();
            }
            return $rows;
        }));
    }

    public function testAStreamLeavesNoTimerBehindWhetherItEndsOrIsLeftHalfWay(): void
    {
        $pool = new Pool($this->connector, max: 1, timeout: 60.0);
        $driver = Loop::get();
        $count = \Closure::bind(fn(): int => \count($this->watchers), $driver, AbstractDriver::class); // the driver's own list
        $watchers = static fn(): int => $count();
        await(async(static fn() => $pool->query('SELECT 1'))); // the pool's idle timer, made once
        $before = $watchers();
        await(async(static function () use ($pool): void {
            foreach ($pool->stream('SLOW 0.01') as $row) {
            }
        }));
        await(async(static function () use ($pool): void {
            foreach ($pool->stream('SLOW 0.01') as $row) {
                break;
            }
        }));
        delay(0.02); // the connection of the stream left half-way goes back (rolled back) from the next loop turn
        self::assertSame($before, $watchers(), 'every timer a stream armed is cancelled');
    }

    public function testAStreamWhoseServerStopsAnsweringEndsAtTheTimeoutWithItsConnection(): void
    {
        $pool = new Pool($this->connector, max: 1, timeout: 0.08);
        $rows = [];
        $started = microtime(true);
        $error = $this->expectFailure(StatementTimeoutException::class, static function () use ($pool, &$rows): void {
            foreach ($pool->stream('SLOW 5') as $row) {
                $rows[] = $row;
            }
        });
        self::assertLessThan(1.0, microtime(true) - $started);
        self::assertSame([], $rows);
        self::assertStringContainsString('statement timeout of 0.08 s', $error->getMessage());
        delay(0.01); // the stream's connection goes back from the next loop turn
        self::assertTrue($this->connector->opened[0]->closed, 'a half-read connection is closed');
        self::assertSame(2, await(async(static fn() => $pool->query('SELECT 1')->first()['connection'] ?? null)));
    }

    public function testTheTimeoutOfTheUrlDefaultsToAMinuteAndATypoIsRefused(): void
    {
        self::assertSame(Pool::DEFAULT_TIMEOUT, Pool::fromDsn('mysql://u@h/d')->timeout);
        self::assertSame(60.0, Pool::DEFAULT_TIMEOUT);
        self::assertSame(2.5, Pool::fromDsn('mysql://u@h/d?timeout=2.5')->timeout);
        self::assertSame(0.0, Pool::fromDsn('mysql://u@h/d?timeout=0')->timeout, '0: no limit');
        foreach (['30s', '', '-1', '1e999', '31536001', 'NAN'] as $bad) {
            try {
                Pool::fromDsn("mysql://u:hunter2@h/d?timeout=$bad");
                self::fail("timeout=$bad accepted");
            } catch (\ValueError $e) {
                self::assertStringNotContainsString('hunter2', $e->getMessage());
                self::assertStringContainsString('timeout', $e->getMessage());
            }
        }
    }

    public function testWithTheTimeoutOffAStatementRunsAsLongAsItTakes(): void
    {
        $pool = new Pool($this->connector, max: 1, timeout: 0.0); // not a timeout of no time
        self::assertSame(1, await(async(static fn() => $pool->query('SLEEP 0.15')->first()['connection'] ?? null)));
        self::assertFalse($this->connector->opened[0]->closed);
    }

    public function testAConnectionGivenBackInsideATransactionIsRolledBackBeforeReuse(): void
    {
        $pool = new Pool($this->connector, max: 1);
        await(async(static function () use ($pool): void {
            foreach ($pool->stream('SELECT big') as $row) {
                break; // abandoned half-way: its BEGIN is still open
            }
        }));
        await(async(static fn() => $pool->query('SELECT 1')));
        self::assertSame(['#1 BEGIN', '#1 FETCH 1', '#1 ROLLBACK', '#1 SELECT 1'], $this->connector->log);
    }

    public function testATransactionCommitsWhenItsCallbackReturnsAndRollsBackWhenItThrows(): void
    {
        $pool = new Pool($this->connector, max: 1);
        $value = await(async(static fn() => $pool->transaction(static function (Transaction $tx): string {
            $tx->execute('INSERT a');

            return 'done';
        })));
        self::assertSame('done', $value);
        $this->expectFailure(\DomainException::class, static fn() => $pool->transaction(static function (Transaction $tx): never {
            $tx->execute('INSERT b');
            throw new \DomainException('changed my mind');
        }));
        self::assertSame(['#1 BEGIN', '#1 INSERT a', '#1 COMMIT', '#1 BEGIN', '#1 INSERT b', '#1 ROLLBACK'], $this->connector->log);
    }

    public function testANestedTransactionIsASavepoint(): void
    {
        $pool = new Pool($this->connector, max: 1);
        await(async(static fn() => $pool->transaction(static function (Transaction $tx): void {
            $tx->transaction(static fn(Transaction $inner) => $inner->execute('INSERT kept'));
            try {
                $tx->transaction(static function (Transaction $inner): never {
                    $inner->execute('INSERT undone');
                    throw new \DomainException('no');
                });
                self::fail('the exception reaches the caller');
            } catch (\DomainException) {
            }
        })));
        self::assertSame([
            '#1 BEGIN',
            '#1 SAVEPOINT kiln_savepoint_0_1', '#1 INSERT kept', '#1 RELEASE SAVEPOINT kiln_savepoint_0_1',
            '#1 SAVEPOINT kiln_savepoint_0_2', '#1 INSERT undone', '#1 ROLLBACK TO SAVEPOINT kiln_savepoint_0_2',
            '#1 COMMIT',
        ], $this->connector->log);
    }

    public function testATransactionUsedAfterItsCallbackIsAnError(): void
    {
        $pool = new Pool($this->connector, max: 1);
        $kept = await(async(static fn() => $pool->transaction(static fn(Transaction $tx): Transaction => $tx)));
        $this->expectException(\Error::class);
        $this->expectExceptionMessage('This transaction has ended');
        $kept->query('SELECT 1');
    }

    public function testAClosedPoolClosesItsIdleConnectionsAndRefusesMore(): void
    {
        $pool = new Pool($this->connector, max: 2);
        await(async(static fn() => $pool->query('SELECT 1')));
        $pool->close();
        self::assertSame(PoolState::Closed, $pool->state());
        self::assertTrue($this->connector->opened[0]->closed);
        $this->expectException(\Error::class);
        await(async(static fn() => $pool->query('SELECT 1')));
    }

    /**
     * @param class-string<\Throwable> $class
     * @param \Closure(): mixed $fn
     */
    private function expectFailure(string $class, \Closure $fn): \Throwable
    {
        try {
            await(async($fn));
        } catch (\Throwable $e) {
            self::assertInstanceOf($class, $e, (string) $e);

            return $e;
        }
        self::fail("expected $class");
    }
}
