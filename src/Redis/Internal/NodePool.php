<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

use Kiln\Loop\Deferred;
use Kiln\Loop\Future;
use Kiln\Loop\Loop;
use Kiln\Redis\ConnectException;
use Kiln\Redis\ConnectionLostException;
use Kiln\Redis\Endpoint;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\RedisException;

/**
 * Up to poolSize connections to one server, opened on demand. A command goes to the open connection
 * with the fewest replies outstanding; another connection is opened only while all are busy. A broken
 * connection is dropped; the next command opens a new one at once, and after a failed attempt the
 * next waits out a backoff with jitter (commands meanwhile fail fast with ConnectException).
 *
 * @internal
 */
final class NodePool
{
    /** @var array<int, Connection> by spl_object_id */
    private array $connections = [];
    /** @var Future<Connection>|null */
    private ?Future $connecting = null;
    private int $failures = 0;
    private float $retryAt = 0.0;
    private string $lastError = '';
    private bool $closed = false;
    private readonly Backoff $backoff;
    private readonly \Closure $forget;

    /** @param \Closure(): Endpoint $locate where the server is now (fixed, or asked of the Sentinels) */
    public function __construct(private readonly RedisConfig $config, private readonly \Closure $locate)
    {
        $this->backoff = new Backoff($config->backoffInitial, $config->backoffMax);
        $this->forget = function (Connection $connection): void {
            unset($this->connections[spl_object_id($connection)]);
        };
    }

    /** @throws ConnectException */
    public function connection(): Connection
    {
        if ($this->closed) {
            throw new \Error('This Redis client was closed; make a new one');
        }
        $best = null;
        foreach ($this->connections as $connection) {
            if ($this->config->poolSize === 1) {
                return $connection;
            }
            if ($best === null || $connection->inFlight() < $best->inFlight()) {
                $best = $connection;
            }
        }
        if ($best !== null && ($best->inFlight() === 0 || \count($this->connections) >= $this->config->poolSize)) {
            return $best;
        }
        if ($this->connecting !== null) {
            return $best ?? $this->connecting->await();
        }
        if (Loop::now() < $this->retryAt) {
            return $best ?? throw new ConnectException(\sprintf('Redis is unavailable (%s); next attempt in %.2f s', $this->lastError, $this->retryAt - Loop::now()));
        }

        return $this->open();
    }

    /** Closes every connection; commands in flight fail with $reason. */
    public function closeAll(RedisException $reason): void
    {
        foreach ($this->connections as $connection) {
            $connection->close($reason);
        }
        $this->connections = [];
    }

    public function close(): void
    {
        $this->closeAll(new ConnectionLostException('The Redis client was closed'));
        $this->closed = true;
    }

    public function isClosed(): bool
    {
        return $this->closed;
    }

    private function open(): Connection
    {
        /** @var Deferred<Connection> $deferred */
        $deferred = new Deferred();
        $this->connecting = $deferred->getFuture();
        try {
            $connection = Connector::connect($this->config, ($this->locate)(), onClose: $this->forget);
        } catch (RedisException $e) {
            $this->failures++;
            $this->retryAt = Loop::now() + $this->backoff->delay($this->failures);
            $this->lastError = $e->getMessage();
            $error = $e instanceof ConnectException ? $e : new ConnectException($e->getMessage(), 0, $e);
            $deferred->error($error);
            throw $error;
        } finally {
            $this->connecting = null;
        }
        $this->failures = 0;
        if ($this->closed) {
            $connection->close(new ConnectException('The Redis client was closed'));
        } else {
            $this->connections[spl_object_id($connection)] = $connection;
        }
        $deferred->complete($connection);

        return $connection;
    }
}
