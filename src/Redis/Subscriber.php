<?php

declare(strict_types=1);

namespace Kiln\Redis;

use function Kiln\Loop\delay;

use Kiln\Loop\Loop;
use Kiln\Redis\Internal\Backoff;
use Kiln\Redis\Internal\ClusterRouter;
use Kiln\Redis\Internal\SentinelLocator;
use Kiln\Redis\Internal\SubscriptionLink;

/**
 * Pub/sub on connections of its own (a subscribed connection can do nothing else). Each subscribe
 * waits for the server's confirmation, so a message published after it returns is received.
 *
 * Handlers run on the loop, in the order messages arrive; they MUST NOT suspend (start a Fiber with
 * Loop::async() for work that waits) and an exception they throw goes to the loop's error handler.
 * After a lost connection the subscriber reconnects by itself, subscribes to every channel, pattern
 * and shard channel again and, once the server has confirmed them, calls the onResubscribed callbacks:
 * what was published while it was away is lost (pub/sub delivers at most once; use Streams for at least
 * once), and what is published after the callbacks run arrives. A subscribe the server refuses then
 * (an ACL change: NOPERM) is reported to the loop's error handler and forgotten.
 *
 * In Cluster mode, channels and patterns use one node (the Cluster forwards every PUBLISH to all),
 * and shard channels (SSUBSCRIBE) the master that owns the channel's slot; a shard channel whose
 * slot moves is followed to its new owner, and one whose master fails to the replica promoted in its place.
 * A node that answers an SSUBSCRIBE with MOVED, ASK, CLUSTERDOWN or TRYAGAIN (a stale slot map, a failover
 * not settled yet) is not taken as subscribed: the owner is looked up again and the subscribe repeated, with
 * backoff, until it is confirmed.
 */
final class Subscriber
{
    /** Tries of ssubscribe() when the Cluster answers that the channel is elsewhere or not served yet. */
    private const SHARD_ATTEMPTS = 5;

    private readonly SubscriptionLink $main;
    private readonly ?ClusterRouter $cluster;
    /** @var array<string, SubscriptionLink> node => link, for shard channels */
    private array $shards = [];
    /** @var array<string, string> shard channel => node */
    private array $shardNodes = [];
    /** @var array<string, \Closure(string, string): void> */
    private array $shardHandlers = [];
    /** @var list<\Closure(): void> */
    private array $onResubscribed = [];
    private readonly Backoff $backoff;
    private bool $closed = false;

    public function __construct(private readonly RedisConfig $config)
    {
        $locate = match ($config->mode) {
            RedisMode::Sentinel => (new SentinelLocator($config))->master(...),
            default => static fn(): Endpoint => $config->endpoints[0],
        };
        $this->cluster = $config->mode === RedisMode::Cluster ? new ClusterRouter($config) : null;
        $this->backoff = new Backoff($config->backoffInitial, $config->backoffMax);
        $single = $config->mode === RedisMode::Cluster ? $config->forEndpoint($config->endpoints[0]) : $config;
        $this->main = new SubscriptionLink($single, $locate, $this->resubscribed(...), $this->movedShard(...));
    }

    public static function fromUri(string $uri): self
    {
        return new self(RedisConfig::fromUri($uri));
    }

    /** @param \Closure(string $message, string $channel): void $handler */
    public function subscribe(string $channel, \Closure $handler): void
    {
        $this->main->add(SubscriptionKind::Channel, $channel, $handler);
    }

    /** @param \Closure(string $message, string $channel, string $pattern): void $handler */
    public function psubscribe(string $pattern, \Closure $handler): void
    {
        $this->main->add(SubscriptionKind::Pattern, $pattern, $handler);
    }

    /**
     * Sharded pub/sub (Redis 7): SSUBSCRIBE on the node that owns the channel's slot (any server
     * outside a Cluster). Publish with SPUBLISH.
     *
     * @param \Closure(string $message, string $channel): void $handler
     */
    public function ssubscribe(string $channel, \Closure $handler): void
    {
        if ($this->closed) {
            throw new \Error('This subscriber was closed; make a new one');
        }
        $this->shardHandlers[$channel] = $handler;
        try {
            $this->follow($channel, $handler, self::SHARD_ATTEMPTS);
        } catch (RedisException $e) {
            if (($this->shardHandlers[$channel] ?? null) === $handler) {
                unset($this->shardHandlers[$channel]); // not subscribed: a later slot move must not revive it
            }
            throw $e;
        }
    }

    public function unsubscribe(string $channel): void
    {
        $this->main->remove(SubscriptionKind::Channel, $channel);
    }

    public function punsubscribe(string $pattern): void
    {
        $this->main->remove(SubscriptionKind::Pattern, $pattern);
    }

    public function sunsubscribe(string $channel): void
    {
        unset($this->shardHandlers[$channel]);
        $this->shardLink($channel)->remove(SubscriptionKind::Shard, $channel);
        unset($this->shardNodes[$channel]);
    }

    /** @param \Closure(): void $callback called after every resubscription that followed a lost connection */
    public function onResubscribed(\Closure $callback): void
    {
        $this->onResubscribed[] = $callback;
    }

    public function close(): void
    {
        $this->closed = true;
        $this->main->close();
        foreach ($this->shards as $link) {
            $link->close();
        }
        $this->shards = [];
        $this->cluster?->close();
    }

    private function shardLink(string $channel): SubscriptionLink
    {
        if ($this->cluster === null) {
            return $this->main;
        }
        $slot = ClusterSlot::of($channel);
        $node = $this->shardNodes[$channel] ??= (string) $this->cluster->ownerOf($slot);
        if (isset($this->shards[$node])) {
            return $this->shards[$node];
        }
        // The first connect goes to the owner just looked up; a reconnect asks the Cluster again, so a
        // link whose master died follows its slots to the promoted replica (all of a master's slots
        // move to the same one).
        $cluster = $this->cluster;
        $endpoint = Endpoint::parse($node);
        $connects = 0;
        $locate = static function () use ($cluster, $slot, $endpoint, &$connects): Endpoint {
            if ($connects++ === 0) {
                return $endpoint;
            }
            $cluster->forgetSlots();

            return $cluster->ownerOf($slot);
        };

        return $this->shards[$node] = new SubscriptionLink($this->config->forEndpoint($endpoint), $locate, $this->resubscribed(...), $this->movedShard(...));
    }

    private function resubscribed(): void
    {
        foreach ($this->onResubscribed as $callback) {
            $callback();
        }
    }

    /**
     * The server dropped a shard channel (its slot moved), or refused it after a reconnect ($refusal): subscribe again
     * where it lives now, and once that is confirmed tell the onResubscribed callbacks (messages may have been
     * missed meanwhile). Outside a Cluster a refusal is final (no other node to try): it is reported and the
     * channel forgotten.
     */
    private function movedShard(SubscriptionKind $kind, string $channel, ?ErrorReplyException $refusal): void
    {
        $handler = $this->shardHandlers[$channel] ?? null;
        if ($handler === null) {
            return;
        }
        if ($this->cluster === null) {
            if ($refusal !== null) {
                unset($this->shardHandlers[$channel]);
                Loop::reportError(new RedisException("Subscribing to shard channel $channel again failed: {$refusal->getMessage()}", 0, $refusal));
            }

            return;
        }
        $old = $this->shardNodes[$channel] ?? null;
        unset($this->shardNodes[$channel]);
        if ($old !== null && isset($this->shards[$old])) {
            $this->shards[$old]->remove($kind, $channel);
        }
        $this->dropLink($old);
        Loop::async(function () use ($channel, $handler): void {
            $this->cluster?->forgetSlots();
            try {
                $subscribed = $this->follow($channel, $handler, null);
            } catch (RedisException $e) { // refused for good (NOPERM, an unknown command): say so and stop
                Loop::reportError(new RedisException("Subscribing to shard channel $channel again failed: {$e->getMessage()}", 0, $e));

                return;
            }
            if ($subscribed) {
                $this->resubscribed();
            }
        });
    }

    /**
     * Subscribes $handler to $channel where the channel's slot lives, looking the owner up again (with backoff) after
     * each answer that the channel is elsewhere or not served yet (MOVED, ASK, CLUSTERDOWN, TRYAGAIN), at most
     * $attempts times; with $attempts null, until a node confirms it, also after a node could not be reached or did
     * not answer. Returns false without subscribing once the subscriber is closed, or the channel unsubscribed or
     * given another handler meanwhile; true once subscribed.
     *
     * @throws RedisException the last failure, when no more tries are left for it
     */
    private function follow(string $channel, \Closure $handler, ?int $attempts): bool
    {
        for ($attempt = 1; !$this->closed && ($this->shardHandlers[$channel] ?? null) === $handler; $attempt++) {
            try {
                $this->shardLink($channel)->add(SubscriptionKind::Shard, $channel, $handler);

                return true;
            } catch (RedisException $e) {
                $again = $e instanceof ErrorReplyException ? self::elsewhere($e) : $attempts === null;
                if ($this->cluster === null || !$again || ($attempts !== null && $attempt >= $attempts)) {
                    throw $e;
                }
            }
            $this->dropLink($this->shardNodes[$channel] ?? null);
            unset($this->shardNodes[$channel]);
            $this->cluster->forgetSlots();
            delay($this->backoff->delay($attempt));
        }

        return false;
    }

    /** Whether the Cluster answered that the channel is served elsewhere, or will be once a failover settles. */
    private static function elsewhere(ErrorReplyException $e): bool
    {
        return \in_array($e->code(), ['MOVED', 'ASK', 'CLUSTERDOWN', 'TRYAGAIN'], true);
    }

    /** Closes the link to $node once it carries no subscription. */
    private function dropLink(?string $node): void
    {
        if ($node !== null && isset($this->shards[$node]) && $this->shards[$node]->isEmpty()) {
            $this->shards[$node]->close();
            unset($this->shards[$node]);
        }
    }
}
