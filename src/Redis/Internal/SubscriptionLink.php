<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

use Kiln\Loop\CancelledException;
use Kiln\Loop\Deferred;
use Kiln\Loop\Future;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutCancellation;
use Kiln\Redis\ClusterSlot;
use Kiln\Redis\CommandTimeoutException;
use Kiln\Redis\ConnectException;
use Kiln\Redis\ConnectionLostException;
use Kiln\Redis\Endpoint;
use Kiln\Redis\ErrorReplyException;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\RedisException;
use Kiln\Redis\Resp\ErrorReply;
use Kiln\Redis\Resp\Push;
use Kiln\Redis\SubscriptionKind;

/**
 * One subscribe-mode connection to one server and what it is subscribed to. When the connection
 * drops it reconnects (backoff with jitter) and subscribes to every channel and pattern again, then
 * calls $onResubscribed: messages published meanwhile are lost (pub/sub is at most once).
 *
 * @internal
 */
final class SubscriptionLink
{
    private ?Connection $connection = null;
    /** @var array<string, array<string, \Closure(string, string, string): void>> kind value => name => handler(message, channel, pattern-or-channel) */
    private array $subscriptions = ['subscribe' => [], 'psubscribe' => [], 'ssubscribe' => []];
    /** @var array<string, Deferred<null>> "kind name" => confirmation awaited */
    private array $confirmations = [];
    /** @var array<string, true> shard channels whose SSUBSCRIBE on this connection is not confirmed yet */
    private array $unconfirmedShards = [];
    /** Channels and patterns whose SUBSCRIBE or PSUBSCRIBE on this connection is not confirmed yet. */
    private int $unconfirmedOthers = 0;
    private int $failures = 0;
    private bool $closed = false;
    private ?string $retryTimer = null;
    private readonly ?string $healthTimer;
    /** A PING was written and nothing came back since. */
    private bool $pingUnanswered = false;
    /** @var Future<null>|null */
    private ?Future $connecting = null;
    private bool $connectedBefore = false;
    private readonly Backoff $backoff;

    /**
     * @param \Closure(): Endpoint $locate
     * @param \Closure(): void $onResubscribed
     * @param \Closure(SubscriptionKind, string): void $onServerUnsubscribe a shard channel the server dropped (its slot moved)
     */
    public function __construct(
        private readonly RedisConfig $config,
        private readonly \Closure $locate,
        private readonly \Closure $onResubscribed,
        private readonly \Closure $onServerUnsubscribe,
    ) {
        $this->backoff = new Backoff($config->backoffInitial, $config->backoffMax);
        $this->healthTimer = $config->healthCheckInterval > 0 ? Loop::repeat($config->healthCheckInterval, $this->checkHealth(...)) : null;
        if ($this->healthTimer !== null) {
            Loop::unreference($this->healthTimer);
        }
    }

    /**
     * Subscribes and waits for the server's confirmation. On failure (no connection, no confirmation in
     * time) the subscription is forgotten and the exception thrown: the caller may try again.
     *
     * @param \Closure(string, string, string): void $handler
     */
    public function add(SubscriptionKind $kind, string $name, \Closure $handler): void
    {
        $this->subscriptions[$kind->value][$name] = $handler;
        $key = "$kind->value $name";
        /** @var Deferred<null> $deferred */
        $deferred = $this->confirmations[$key] ?? new Deferred();
        $this->confirmations[$key] = $deferred;
        try {
            if ($this->connection === null) {
                $this->establish(); // subscribes to everything recorded, this one included
            } else {
                $this->connection->write([strtoupper($kind->value), $name]);
                if ($kind === SubscriptionKind::Shard) {
                    $this->unconfirmedShards[$name] = true;
                } else {
                    $this->unconfirmedOthers++;
                }
            }
            $deferred->getFuture()->await(new TimeoutCancellation($this->config->commandTimeout, "Redis did not confirm $kind->value $name within {$this->config->commandTimeout} s"));
        } catch (RedisException | CancelledException $e) {
            unset($this->subscriptions[$kind->value][$name], $this->confirmations[$key]);
            throw $e instanceof CancelledException ? new CommandTimeoutException($e->getMessage(), 0, $e) : $e;
        }
    }

    public function remove(SubscriptionKind $kind, string $name): void
    {
        unset($this->subscriptions[$kind->value][$name]);
        if ($this->connection?->isOpen() === true) {
            $this->connection->write([$kind->unsubscribeCommand(), $name]);
        }
    }

    public function isEmpty(): bool
    {
        return $this->subscriptions['subscribe'] === [] && $this->subscriptions['psubscribe'] === [] && $this->subscriptions['ssubscribe'] === [];
    }

    public function close(): void
    {
        $this->closed = true;
        if ($this->retryTimer !== null) {
            Loop::cancel($this->retryTimer);
        }
        if ($this->healthTimer !== null) {
            Loop::cancel($this->healthTimer);
        }
        $this->connection?->close(new ConnectException('The subscriber was closed'));
        $this->connection = null;
    }

    /**
     * Connects (or waits for the connect already under way) and subscribes to every channel, pattern
     * and shard channel recorded. After a first connection, says so through $onResubscribed.
     */
    private function establish(): void
    {
        if ($this->closed) {
            throw new \Error('This subscriber was closed; make a new one');
        }
        if ($this->connecting !== null) {
            $this->connecting->await();

            return;
        }
        /** @var Deferred<null> $done */
        $done = new Deferred();
        $this->connecting = $done->getFuture();
        try {
            $connection = Connector::connect($this->config, ($this->locate)(), $this->receive(...), $this->lost(...));
        } catch (RedisException $e) {
            $done->error($e);
            throw $e;
        } finally {
            $this->connecting = null;
        }
        $this->connection = $connection;
        $this->pingUnanswered = false;
        $this->failures = 0;
        if ($this->retryTimer !== null) {
            Loop::cancel($this->retryTimer);
            $this->retryTimer = null;
        }
        $this->unconfirmedShards = [];
        $this->unconfirmedOthers = 0;
        foreach ($this->subscriptions as $kind => $names) {
            if ($kind === 'ssubscribe') {
                foreach (array_keys($names) as $name) {
                    $connection->write(['SSUBSCRIBE', (string) $name]);
                    $this->unconfirmedShards[(string) $name] = true;
                }
            } elseif ($names !== []) {
                $connection->write([strtoupper($kind), ...array_map('strval', array_keys($names))]);
                $this->unconfirmedOthers += \count($names);
            }
        }
        $done->complete(null);
        if ($this->connectedBefore) {
            ($this->onResubscribed)();
        }
        $this->connectedBefore = true;
    }

    private function lost(Connection $connection): void
    {
        if ($this->connection !== $connection) {
            return;
        }
        $this->connection = null;
        foreach ($this->confirmations as $deferred) {
            $deferred->error(new ConnectException('The subscribe connection to Redis was lost'));
        }
        $this->confirmations = [];
        if (!$this->closed) {
            $this->scheduleReconnect();
        }
    }

    private function scheduleReconnect(): void
    {
        $this->retryTimer = Loop::delay($this->backoff->delay($this->failures), function (): void {
            $this->retryTimer = null;
            Loop::async($this->reconnect(...));
        });
    }

    private function reconnect(): void
    {
        if ($this->closed || $this->connection !== null) {
            return;
        }
        try {
            $this->establish();
        } catch (RedisException) {
            $this->failures++;
            $this->scheduleReconnect();
        }
    }

    /**
     * A half-open connection (the peer gone without a FIN: a cut cable, a paused VM) would keep a
     * subscriber waiting for ever; a PING that nothing answered by the next check closes it, and the
     * usual reconnect follows.
     */
    private function checkHealth(): void
    {
        $connection = $this->connection;
        if ($connection === null || !$connection->isOpen()) {
            return;
        }
        if ($this->pingUnanswered) {
            $connection->close(new ConnectionLostException("Redis at {$connection->peer()} did not answer a PING within {$this->config->healthCheckInterval} s"));

            return;
        }
        $this->pingUnanswered = true;
        $connection->write(['PING']);
    }

    private function receive(mixed $value): void
    {
        $this->pingUnanswered = false;
        try {
            $this->dispatch($value);
        } catch (\Throwable $e) {
            Loop::reportError($e);
        }
    }

    /**
     * An error reply on a subscribe connection answers a subscribe: in a Cluster, an SSUBSCRIBE sent to a node
     * that does not own the channel's slot (MOVED, ASK: a stale slot map) or that cannot serve it yet (CLUSTERDOWN,
     * TRYAGAIN: a failover under way). Those four concern shard channels only (a Cluster redirects no plain
     * SUBSCRIBE); MOVED and ASK name the slot, the other two answer the shard channels not confirmed yet. Any other
     * error (NOPERM, an unknown command) is taken for a shard channel's only while no channel or pattern awaits its
     * confirmation too; otherwise it cannot be told whose it is, and is left alone. A subscribe awaited by add()
     * fails with the error; one sent again after a reconnect is handed to $onServerUnsubscribe, which subscribes
     * it where it lives now. Without this, the link counted the channel as subscribed and its messages never came.
     */
    private function refused(ErrorReply $error): void
    {
        $words = explode(' ', $error->message);
        $cluster = \in_array($words[0], ['MOVED', 'ASK', 'CLUSTERDOWN', 'TRYAGAIN'], true);
        if (!$cluster && $this->unconfirmedOthers > 0) {
            return;
        }
        $slot = \in_array($words[0], ['MOVED', 'ASK'], true) && isset($words[1]) && ctype_digit($words[1]) ? (int) $words[1] : null;
        foreach (array_keys($this->unconfirmedShards) as $name) {
            $name = (string) $name;
            if ($slot !== null && ClusterSlot::of($name) !== $slot) {
                continue;
            }
            unset($this->unconfirmedShards[$name]);
            $deferred = $this->confirmations["ssubscribe $name"] ?? null;
            if ($deferred !== null) {
                unset($this->confirmations["ssubscribe $name"]);
                $deferred->error(new ErrorReplyException($error));
            } elseif (isset($this->subscriptions['ssubscribe'][$name])) {
                ($this->onServerUnsubscribe)(SubscriptionKind::Shard, $name);
            }
        }
    }

    private function dispatch(mixed $value): void
    {
        if ($value instanceof ErrorReply) {
            $this->refused($value);

            return;
        }
        $items = $value instanceof Push ? $value->items : $value;
        if (!\is_array($items) || !isset($items[0]) || !\is_string($items[0])) {
            return;
        }
        $kind = strtolower($items[0]);
        $first = \is_string($items[1] ?? null) ? $items[1] : '';
        switch ($kind) {
            case 'message':
            case 'smessage':
                $handler = $this->subscriptions[$kind === 'message' ? 'subscribe' : 'ssubscribe'][$first] ?? null;
                if ($handler !== null && \is_string($items[2] ?? null)) {
                    $handler($items[2], $first, $first);
                }
                break;
            case 'pmessage':
                $handler = $this->subscriptions['psubscribe'][$first] ?? null;
                if ($handler !== null && \is_string($items[2] ?? null) && \is_string($items[3] ?? null)) {
                    $handler($items[3], $items[2], $first);
                }
                break;
            case 'subscribe':
            case 'psubscribe':
            case 'ssubscribe':
                if ($kind === 'ssubscribe') {
                    unset($this->unconfirmedShards[$first]);
                } else {
                    $this->unconfirmedOthers = max(0, $this->unconfirmedOthers - 1);
                }
                $deferred = $this->confirmations["$kind $first"] ?? null;
                unset($this->confirmations["$kind $first"]);
                $deferred?->complete(null);
                break;
            case 'sunsubscribe':
                if (isset($this->subscriptions['ssubscribe'][$first])) {
                    ($this->onServerUnsubscribe)(SubscriptionKind::Shard, $first);
                }
                break;
        }
    }
}
