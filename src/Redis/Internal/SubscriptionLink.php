<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

use Kiln\Loop\CancelledException;
use Kiln\Loop\Deferred;
use Kiln\Loop\Future;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutCancellation;
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
 * drops it reconnects (backoff with jitter) and subscribes to every channel and pattern again; once the
 * server has answered every one of those subscribes it calls $onResubscribed: messages published
 * meanwhile are lost (pub/sub is at most once), and from then on they arrive.
 *
 * The server answers the (un)subscribe commands of a connection in the order they were written: one
 * confirmation per name, or one error for the whole command. The link keeps the commands still awaiting
 * an answer in that order, so a confirmation or an error is matched to the command it answers.
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
    /** @var list<array{string, array<string, true>}> commands written on this connection and not fully answered, oldest first: the reply kind, the names whose answer is awaited */
    private array $unanswered = [];
    /** The connection was made again after a loss, and the server has not answered all its subscribes yet. */
    private bool $resubscribing = false;
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
     * @param \Closure(SubscriptionKind, string, ?ErrorReplyException): void $onServerUnsubscribe a shard channel the
     *     server dropped (its slot moved; no exception) or refused to subscribe again after a reconnect (the refusal),
     *     handed back: the link has forgotten it
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
                $this->send($this->connection, $kind->value, [$name]);
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
            $this->send($this->connection, strtolower($kind->unsubscribeCommand()), [$name]);
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
     * and shard channel recorded. After a first connection, $onResubscribed follows once the server has
     * answered them all (settled()).
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
        $this->unanswered = [];
        foreach ($this->subscriptions as $kind => $names) {
            // One command per name: Redis refuses a whole command for one forbidden channel (NOPERM), and in a Cluster
            // shard channels of other slots may not share one.
            foreach (array_keys($names) as $name) {
                $this->send($connection, $kind, [(string) $name]);
            }
        }
        $done->complete(null);
        $this->resubscribing = $this->connectedBefore;
        $this->connectedBefore = true;
        $this->settled();
    }

    /**
     * Writes a (un)subscribe command and records the answers it awaits: one per name, of the kind its reply carries
     * ("ssubscribe", "unsubscribe", ...).
     *
     * @param non-empty-list<string> $names
     */
    private function send(Connection $connection, string $kind, array $names): void
    {
        $connection->write([strtoupper($kind), ...$names]);
        $this->unanswered[] = [$kind, array_fill_keys($names, true)];
    }

    /** Takes $name off the oldest command of $kind that awaits its answer. */
    private function answered(string $kind, string $name): void
    {
        foreach ($this->unanswered as $i => [$awaited, $names]) {
            if ($awaited === $kind && isset($names[$name])) {
                unset($names[$name]);
                if ($names === []) {
                    array_splice($this->unanswered, $i, 1);
                } else {
                    $this->unanswered[$i][1] = $names;
                }

                return;
            }
        }
    }

    /** After a reconnect: once every subscribe sent again is answered, the subscriptions left are live; say so. */
    private function settled(): void
    {
        if (!$this->resubscribing || $this->unanswered !== []) {
            return;
        }
        $this->resubscribing = false; // answered: a later subscribe is no resubscription, whatever came of these
        if ($this->connection !== null && !$this->closed && !$this->isEmpty()) {
            ($this->onResubscribed)();
        }
    }

    private function lost(Connection $connection): void
    {
        if ($this->connection !== $connection) {
            return;
        }
        $this->connection = null;
        $this->unanswered = [];
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
        $this->unanswered[] = ['pong', ['' => true]]; // its answer (or its error: a user without PING rights) comes in turn
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
     * An error reply answers the oldest command still awaiting an answer, for all its names: in a Cluster, an
     * SSUBSCRIBE sent to a node that does not own the channel's slot (MOVED, ASK: a stale slot map) or that cannot
     * serve it yet (CLUSTERDOWN, TRYAGAIN: a failover under way); anywhere, a subscribe the user may not make
     * (NOPERM). A subscribe awaited by add() fails with the error. One sent again after a reconnect: a shard
     * channel is handed to $onServerUnsubscribe, which subscribes it where it lives now (or says it cannot); a
     * channel or pattern is forgotten and the refusal reported to the loop's error handler. Counted as
     * subscribed instead, the channel's messages would never come.
     */
    private function refused(ErrorReply $error): void
    {
        $command = array_shift($this->unanswered);
        if ($command === null) {
            return;
        }
        [$kind, $names] = $command;
        $code = explode(' ', $error->message, 2)[0];
        $final = $code === 'NOPERM' || \in_array($code, ['MOVED', 'ASK', 'CLUSTERDOWN', 'TRYAGAIN'], true) && $kind === 'ssubscribe';
        $awaited = [];
        foreach (array_keys($names) as $name) {
            $name = (string) $name;
            $deferred = $this->confirmations["$kind $name"] ?? null;
            if ($deferred !== null) {
                unset($this->confirmations["$kind $name"], $this->subscriptions[$kind][$name]);
                $awaited[] = $deferred;
            } elseif (!$final && isset($this->subscriptions[$kind][$name])) {
                // Not a refusal of this channel (max clients, NOAUTH, LOADING, a PING's error): keep it, and subscribe
                // it again on a new connection.
                $this->connection?->close(new ConnectionLostException("Redis answered a subscribe with: $error->message"));
            } elseif ($kind === 'ssubscribe' && isset($this->subscriptions[$kind][$name])) {
                unset($this->subscriptions[$kind][$name]); // handed back: no longer this link's
                ($this->onServerUnsubscribe)(SubscriptionKind::Shard, $name, new ErrorReplyException($error));
            } elseif (isset($this->subscriptions[$kind][$name])) {
                unset($this->subscriptions[$kind][$name]);
                $why = "Redis refused to $kind to $name again after a reconnect, so it is no longer subscribed: $error->message";
                Loop::reportError(new RedisException($why, 0, new ErrorReplyException($error)));
            }
        }
        $this->settled();
        foreach ($awaited as $deferred) { // last: a Deferred resumes its caller at once
            $deferred->error(new ErrorReplyException($error));
        }
    }

    private function dispatch(mixed $value): void
    {
        if ($value instanceof ErrorReply) {
            $this->refused($value);

            return;
        }
        if (\is_string($value) && strtolower($value) === 'pong') { // RESP3 answers PING with +PONG
            $this->answered('pong', '');
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
                $this->answered($kind, $first);
                $deferred = $this->confirmations["$kind $first"] ?? null;
                unset($this->confirmations["$kind $first"]);
                $this->settled(); // before the awaiting caller resumes (a Deferred resumes it at once)
                $deferred?->complete(null);
                break;
            case 'unsubscribe':
            case 'punsubscribe':
            case 'pong':
                $this->answered($kind, $first);
                break;
            case 'sunsubscribe':
                $this->answered($kind, $first);
                if (isset($this->subscriptions['ssubscribe'][$first])) { // not ours: the server dropped it (its slot moved)
                    unset($this->subscriptions['ssubscribe'][$first]);
                    ($this->onServerUnsubscribe)(SubscriptionKind::Shard, $first, null);
                }
                break;
        }
    }
}
