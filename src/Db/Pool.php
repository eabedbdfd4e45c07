<?php

declare(strict_types=1);

namespace Kiln\Db;

use Kiln\Db\Internal\TimedConnection;
use Kiln\Db\Internal\Waiters;
use Kiln\Db\Mysql\MysqlConnector;
use Kiln\Db\Postgres\PgConnector;
use Kiln\Loop\Cancellation;
use Kiln\Loop\Loop;

/**
 * A worker's connections to one database, opened on demand up to $max. Each call takes a free connection
 * (or waits for one up to $waitTimeout seconds, then PoolTimeoutException), runs, and gives it back.
 *
 * - A connection that broke (lost, cancelled half-way) is closed and never handed out again.
 * - A connection given back inside a transaction (a stream abandoned early) is rolled back first.
 * - Idle connections are closed after $idleTimeout seconds; the pool's timer never keeps the loop alive.
 * - A statement still running after $timeout seconds is given up (StatementTimeoutException) and its connection
 *   closed, so a server or network that stops answering never holds a caller for good; 0: no limit.
 * - A connection given back goes straight to the caller that waited longest.
 */
final class Pool implements Executor
{
    /** Seconds a statement may run by default: longer than any web request should wait, short of forever. */
    public const DEFAULT_TIMEOUT = 60.0;

    /** The longest statement timeout taken (seconds); for none, give 0. */
    public const LONGEST_TIMEOUT = 31_536_000;

    private PoolState $state = PoolState::Open;
    /** @var list<array{Connection, float}> idle connections and when each was given back, oldest first */
    private array $idle = [];
    private int $open = 0;
    private ?string $idleTimer = null;
    private readonly Waiters $waiters;

    public function __construct(
        private readonly Connector $connector,
        public readonly int $max = 10,
        private readonly float $waitTimeout = 5.0,
        private readonly float $idleTimeout = 60.0,
        public readonly float $timeout = self::DEFAULT_TIMEOUT,
    ) {
        if ($max < 1 || $waitTimeout <= 0 || $idleTimeout <= 0) {
            throw new \ValueError('A pool needs max >= 1 and positive wait and idle timeouts');
        }
        if (!($timeout >= 0 && $timeout <= self::LONGEST_TIMEOUT)) {
            throw new \ValueError('A pool\'s statement timeout is a number of seconds up to ' . self::LONGEST_TIMEOUT . ' (a year), 0 for none, got ' . $timeout);
        }
        $this->waiters = new Waiters();
    }

    /** A pool for a database URL (see Dsn); nothing is opened until the first statement. */
    public static function fromDsn(#[\SensitiveParameter] string $url): self
    {
        $dsn = Dsn::parse($url);
        $connector = match ($dsn->kind) {
            DbKind::Postgres => new PgConnector($dsn),
            DbKind::MySql => new MysqlConnector($dsn),
        };

        return new self(
            $connector,
            (int) $dsn->option('max', '10'),
            (float) $dsn->option('wait', '5'),
            (float) $dsn->option('idle', '60'),
            self::seconds($dsn->option('timeout', (string) self::DEFAULT_TIMEOUT), 'timeout'),
        );
    }

    public function query(string $sql, array $params = [], ?Cancellation $cancellation = null): Result
    {
        $connection = $this->acquire($cancellation);
        try {
            return $connection->run($sql, $params, $cancellation);
        } finally {
            $this->release($connection);
        }
    }

    public function execute(string $sql, array $params = [], ?Cancellation $cancellation = null): Result
    {
        return $this->query($sql, $params, $cancellation);
    }

    public function stream(string $sql, array $params = []): \Generator
    {
        $connection = $this->acquire(null);
        try {
            yield from $connection->stream($sql, $params);
        } finally {
            // A stream abandoned early ends here from its generator's destructor, which may run where no Fiber
            // can be resumed: the connection goes back from the next loop turn.
            Loop::defer(fn() => $this->release($connection));
        }
    }

    public function transaction(\Closure $fn): mixed
    {
        $connection = $this->acquire(null);
        $transaction = new Transaction($connection);
        try {
            $connection->run('BEGIN');
            try {
                $value = $fn($transaction);
            } catch (\Throwable $e) {
                $transaction->end();
                if (!$connection->isBroken()) {
                    try {
                        $connection->run('ROLLBACK');
                    } catch (DbException) {
                        $connection->close(); // the server rolls back a transaction whose connection ends; the caller gets its own error
                    }
                }
                throw $e;
            }
            $transaction->end();
            $connection->run('COMMIT');

            return $value;
        } finally {
            $this->release($connection);
        }
    }

    /**
     * Takes a connection for the caller alone; give it back with release() exactly once.
     *
     * @throws PoolTimeoutException|ConnectionException|\Kiln\Loop\CancelledException
     */
    public function acquire(?Cancellation $cancellation = null): Connection
    {
        while (true) {
            if ($this->state === PoolState::Closed) {
                throw new \Error('This pool is closed');
            }
            while (($entry = array_pop($this->idle)) !== null) {
                if (!$entry[0]->isBroken()) {
                    return $entry[0];
                }
                $this->discard($entry[0]);
            }
            if ($this->open < $this->max) {
                return $this->openOne($cancellation);
            }
            $connection = $this->waiters->wait($this->waitTimeout, $cancellation, fn(): string => \sprintf(
                'No connection to %s was free within %.1f s (all %d busy): raise max, or shorten the work done inside them',
                $this->connector->describe(),
                $this->waitTimeout,
                $this->max,
            ));
            if ($connection !== null) {
                return $connection; // handed over by release(); null: a place opened up, try again
            }
        }
    }

    /** Gives back a connection taken with acquire(). */
    public function release(Connection $connection): void
    {
        if ($connection->isBroken() || $this->state === PoolState::Closed) {
            $this->discard($connection);

            return;
        }
        if ($connection->inTransaction()) {
            Loop::defer(fn() => Loop::async(function () use ($connection): void {
                try {
                    $connection->run('ROLLBACK');
                } catch (DbException) {
                    $connection->close();
                }
                $this->release($connection);
            }));

            return;
        }
        if ($this->waiters->handOver($connection)) {
            return;
        }
        $this->idle[] = [$connection, Loop::now()];
        $this->idleTimer ??= $this->startIdleTimer();
    }

    /** Closes idle connections now, the others when they are given back; the pool hands out nothing more. */
    public function close(): void
    {
        $this->state = PoolState::Closed;
        foreach ($this->idle as [$connection]) {
            $this->discard($connection);
        }
        $this->idle = [];
        $this->waiters->failAll(new \Error('The pool was closed while waiting for a connection'));
    }

    public function state(): PoolState
    {
        return $this->state;
    }

    /** @return array{open: int, idle: int, waiting: int} */
    public function stats(): array
    {
        return ['open' => $this->open, 'idle' => \count($this->idle), 'waiting' => $this->waiters->count()];
    }

    private function openOne(?Cancellation $cancellation): Connection
    {
        $this->open++;
        try {
            $connection = $this->connector->connect($cancellation);
            return $this->timeout > 0 ? new TimedConnection($connection, $this->timeout, $this->connector->describe()) : $connection;
        } catch (\Throwable $e) {
            $this->open--;
            $this->waiters->handOver(null);
            throw $e;
        }
    }

    private function discard(Connection $connection): void
    {
        $connection->close();
        $this->open--;
        if ($this->state === PoolState::Open) {
            $this->waiters->handOver(null); // the longest waiter may open a new one
        }
    }

    private function startIdleTimer(): string
    {
        $id = Loop::repeat(max(0.05, min(1.0, $this->idleTimeout / 2)), function (string $id): void {
            $limit = Loop::now() - $this->idleTimeout;
            while ($this->idle !== [] && $this->idle[0][1] <= $limit) {
                [$connection] = array_shift($this->idle);
                $this->discard($connection);
            }
            if ($this->idle === []) {
                Loop::cancel($id);
                $this->idleTimer = null;
            }
        });
        Loop::unreference($id);

        return $id;
    }

    /** A URL option given in seconds, refused with its name when it is not a number (a typo must not turn a limit off). */
    private static function seconds(string $value, string $option): float
    {
        if (!is_numeric($value)) {
            throw new \ValueError("The database URL option '$option' is a number of seconds, got '$value'");
        }
        return (float) $value;
    }
}
