<?php

declare(strict_types=1);

namespace Kiln\Redis;

use Kiln\Redis\Internal\ClusterRouter;
use Kiln\Redis\Internal\NodePool;
use Kiln\Redis\Internal\SentinelLocator;

/**
 * Redis on Kiln's loop. Any number of Fibers share it: their commands are pipelined on a few
 * connections (RedisConfig::$poolSize per client) and each gets its own reply.
 *
 * Failures: ErrorReplyException for an error reply; ConnectException when no connection can be made
 * (the command was not sent); ConnectionLostException when the connection broke with the command in
 * flight (it may have run; it is never sent again by the client); CommandTimeoutException when no
 * reply came in time. The client reconnects by itself on the next command, with backoff and jitter
 * after failed attempts. In Sentinel mode it asks the Sentinels for the master on every connect and
 * drops its connections when a former master answers READONLY; in Cluster mode it routes by slot and
 * follows MOVED and ASK.
 *
 * Constructing does no I/O. Call close() when done (a worker's clients go with the worker).
 */
final class RedisClient implements Commands
{
    private readonly ?NodePool $pool;
    private readonly ?ClusterRouter $cluster;

    public function __construct(private readonly RedisConfig $config)
    {
        if ($config->mode === RedisMode::Cluster) {
            $this->pool = null;
            $this->cluster = new ClusterRouter($config);

            return;
        }
        $this->cluster = null;
        if ($config->mode === RedisMode::Sentinel) {
            $locator = new SentinelLocator($config);
            $this->pool = new NodePool($config, $locator->master(...));
        } else {
            $endpoint = $config->endpoints[0];
            $this->pool = new NodePool($config, static fn(): Endpoint => $endpoint);
        }
    }

    public static function fromUri(string $uri): self
    {
        return new self(RedisConfig::fromUri($uri));
    }

    public function config(): RedisConfig
    {
        return $this->config;
    }

    /**
     * Any command, e.g. command('SET', 'k', 'v', 'PX', 500). Replies as RespParser maps them.
     *
     * @throws RedisException
     */
    public function command(string|int|float ...$args): mixed
    {
        return $this->execute(array_values($args));
    }

    /**
     * A command that blocks on the server up to $blockSeconds (BLPOP, XREAD BLOCK ...): the command
     * timeout is extended by that much.
     *
     * @param list<string|int|float> $args
     */
    public function blockingCommand(float $blockSeconds, array $args): mixed
    {
        return $this->execute($args, $blockSeconds);
    }

    /**
     * Sends the commands in one write; error replies come back as Resp\ErrorReply in their place.
     * (Cluster: every command must hash to one slot.)
     *
     * @param list<list<string|int|float>> $commands
     *
     * @return list<mixed>
     */
    public function pipeline(array $commands): array
    {
        if ($this->cluster !== null) {
            return $this->cluster->pipeline($commands);
        }
        \assert($this->pool !== null);

        return $this->pool->connection()->pipeline($commands);
    }

    public function get(string $key): ?string
    {
        $value = $this->execute(['GET', $key]);

        return \is_string($value) ? $value : null;
    }

    /**
     * @param float|null $ttl seconds (millisecond precision); null: no expiry
     * @param bool $onlyIfAbsent NX: returns false if the key exists
     */
    public function set(string $key, string $value, ?float $ttl = null, bool $onlyIfAbsent = false): bool
    {
        $args = ['SET', $key, $value];
        if ($ttl !== null) {
            array_push($args, 'PX', max(1, (int) round($ttl * 1000)));
        }
        if ($onlyIfAbsent) {
            $args[] = 'NX';
        }

        return $this->execute($args) !== null;
    }

    public function delete(string ...$keys): int
    {
        return Replies::integer($this->execute(['DEL', ...array_values($keys)]));
    }

    public function increment(string $key, int $by = 1): int
    {
        return Replies::integer($this->execute($by === 1 ? ['INCR', $key] : ['INCRBY', $key, $by]));
    }

    public function expire(string $key, float $ttl): bool
    {
        return $this->execute(['PEXPIRE', $key, max(1, (int) round($ttl * 1000))]) === 1;
    }

    /** @return array<string, string> field => value */
    public function hashGetAll(string $key): array
    {
        return Replies::pairs($this->execute(['HGETALL', $key]));
    }

    /** @return int how many subscribers received it (on this node, for a Cluster) */
    public function publish(string $channel, string $message): int
    {
        return Replies::integer($this->execute(['PUBLISH', $channel, $message]));
    }

    /**
     * Runs a Lua script by EVALSHA, sending its source with EVAL only when the server answers NOSCRIPT.
     *
     * @param list<string> $keys
     * @param list<string|int|float> $args
     */
    public function evalScript(Script $script, array $keys = [], array $args = []): mixed
    {
        return $script->run($this, $keys, $args);
    }

    public function streams(): Streams
    {
        return new Streams($this);
    }

    /** Closes every connection; commands in flight fail with ConnectionLostException. Using the client afterwards is an \Error. */
    public function close(): void
    {
        $this->pool?->close();
        $this->cluster?->close();
    }

    /** @param list<string|int|float> $args */
    private function execute(array $args, float $extraTime = 0.0): mixed
    {
        if ($this->cluster !== null) {
            return $this->cluster->command($args, $extraTime);
        }
        \assert($this->pool !== null);
        try {
            return $this->pool->connection()->command($args, $extraTime);
        } catch (ErrorReplyException $e) {
            if ($e->code() === 'READONLY' && $this->config->mode === RedisMode::Sentinel) {
                $this->pool->closeAll(new ConnectionLostException('The server is no longer the master'));
            }
            throw $e;
        }
    }
}
