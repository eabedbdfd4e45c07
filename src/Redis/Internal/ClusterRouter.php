<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

use Kiln\Loop\Loop;
use Kiln\Redis\ClusterSlot;
use Kiln\Redis\ConnectException;
use Kiln\Redis\ConnectionLostException;
use Kiln\Redis\Endpoint;
use Kiln\Redis\ErrorReplyException;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\RedisException;
use Kiln\Redis\Replies;
use Kiln\Redis\Resp\ErrorReply;

/**
 * Routes commands in a Redis Cluster: a slot map from CLUSTER SLOTS, a pool per master, MOVED (the
 * slot map is updated and the command sent to the new owner; the old one did not run it) and ASK
 * (ASKING then the command, once, on the importing node). A lost node makes the next command reload
 * the slot map, which is how a failover is followed.
 *
 * @internal
 */
final class ClusterRouter
{
    private const MAX_REDIRECTS = 5;

    /** @var array<int, string> slot => node "host:port" */
    private array $slots = [];
    /** @var array<string, Endpoint> */
    private array $nodes = [];
    /** @var array<string, NodePool> */
    private array $pools = [];
    private float $refreshedAt = -\INF;

    public function __construct(private readonly RedisConfig $config)
    {
        foreach ($config->endpoints as $endpoint) {
            $this->nodes[(string) $endpoint] = $endpoint;
        }
    }

    /** @param list<string|int|float> $args */
    public function command(array $args, float $extraTime = 0.0): mixed
    {
        $key = CommandKeys::routingKey($args);
        $node = $key === null ? $this->anyNode() : $this->owner(ClusterSlot::of($key));
        $asking = false;
        for ($redirects = 0; ; $redirects++) {
            try {
                if (!$asking) {
                    return $this->pool($node)->connection()->command($args, $extraTime);
                }
                $replies = $this->pool($node)->connection()->pipeline([['ASKING'], $args]);
                $reply = $replies[1] ?? null;
                if ($reply instanceof ErrorReply) {
                    throw new ErrorReplyException($reply);
                }

                return $reply;
            } catch (ErrorReplyException $e) {
                $code = $e->code();
                if (($code !== 'MOVED' && $code !== 'ASK' && $code !== 'TRYAGAIN') || $redirects >= self::MAX_REDIRECTS) {
                    throw $e;
                }
                $asking = false;
                if ($code === 'TRYAGAIN') {
                    \Kiln\Loop\delay(0.05);
                    continue;
                }
                [, $slot, $target] = explode(' ', $e->reply->message) + [1 => '0', 2 => ''];
                $endpoint = Endpoint::parse($target);
                $node = (string) $endpoint;
                $this->nodes[$node] = $endpoint;
                if ($code === 'MOVED') {
                    $this->slots[(int) $slot] = $node;
                    $this->refreshedAt = -\INF;
                } else {
                    $asking = true;
                }
            } catch (ConnectException | ConnectionLostException $e) {
                $this->refreshedAt = -\INF;
                throw $e;
            }
        }
    }

    /**
     * A pipeline for one slot. When every command came back MOVED (or ASK), none ran: the pipeline
     * is sent again to the node named (after ASK with ASKING before each command).
     *
     * @param list<list<string|int|float>> $commands all for one slot
     *
     * @return list<mixed>
     */
    public function pipeline(array $commands): array
    {
        if ($commands === []) {
            return [];
        }
        $key = CommandKeys::routingKey($commands[0]);
        $node = $key === null ? $this->anyNode() : $this->owner(ClusterSlot::of($key));
        $asking = false;
        for ($redirects = 0; ; $redirects++) {
            $sent = $commands;
            if ($asking) {
                $sent = [];
                foreach ($commands as $command) {
                    array_push($sent, ['ASKING'], $command);
                }
            }
            $replies = $this->pool($node)->connection()->pipeline($sent);
            if ($asking) {
                $replies = array_values(array_filter($replies, static fn(int $i): bool => $i % 2 === 1, \ARRAY_FILTER_USE_KEY));
            }
            $redirect = self::commonRedirect($replies);
            if ($redirect === null || $redirects >= self::MAX_REDIRECTS) {
                return $replies;
            }
            [$code, $slot, $target] = $redirect;
            $node = (string) $target;
            $this->nodes[$node] = $target;
            $asking = $code === 'ASK';
            if (!$asking) {
                $this->slots[$slot] = $node;
                $this->refreshedAt = -\INF;
            }
        }
    }

    /**
     * @param list<mixed> $replies
     *
     * @return array{string, int, Endpoint}|null the redirect every reply is, if they all are the same one
     */
    private static function commonRedirect(array $replies): ?array
    {
        $first = $replies[0] ?? null;
        if (!$first instanceof ErrorReply || !\in_array($first->code(), ['MOVED', 'ASK'], true)) {
            return null;
        }
        foreach ($replies as $reply) {
            if (!$reply instanceof ErrorReply || $reply->message !== $first->message) {
                return null;
            }
        }
        [$code, $slot, $target] = explode(' ', $first->message) + ['', '0', ''];

        return [$code, (int) $slot, Endpoint::parse($target)];
    }

    /** The master that owns $slot now, as far as this client knows. */
    public function ownerOf(int $slot): Endpoint
    {
        return $this->nodes[$this->owner($slot)];
    }

    /** Drops the slot map; the next routed command loads it again. */
    public function forgetSlots(): void
    {
        $this->refreshedAt = -\INF;
        $this->slots = [];
    }

    public function close(): void
    {
        foreach ($this->pools as $pool) {
            $pool->close();
        }
        $this->pools = [];
    }

    private function owner(int $slot): string
    {
        if ($this->slots === [] || Loop::now() - $this->refreshedAt > 60.0 || ($this->refreshedAt === -\INF)) {
            $this->refresh();
        }

        return $this->slots[$slot] ?? $this->anyNode();
    }

    private function anyNode(): string
    {
        if ($this->slots === []) {
            $this->refresh();
        }
        $owners = array_values(array_unique($this->slots));

        return $owners === [] ? (string) array_key_first($this->nodes) : $owners[array_rand($owners)];
    }

    private function refresh(): void
    {
        $problems = [];
        foreach ($this->nodes as $name => $endpoint) {
            try {
                $reply = $this->pool($name)->connection()->command(['CLUSTER', 'SLOTS']);
            } catch (RedisException $e) {
                $problems[] = "$name: {$e->getMessage()}";
                continue;
            }
            $slots = [];
            foreach (\is_array($reply) ? $reply : [] as $range) {
                if (!\is_array($range) || !\is_array($range[2] ?? null) || !\is_string($range[2][0] ?? null)) {
                    continue;
                }
                $master = new Endpoint($range[2][0] === '' ? $endpoint->host : $range[2][0], Replies::integer($range[2][1] ?? null));
                $this->nodes[(string) $master] = $master;
                for ($slot = Replies::integer($range[0] ?? null), $last = Replies::integer($range[1] ?? null); $slot <= $last; $slot++) {
                    $slots[$slot] = (string) $master;
                }
            }
            if ($slots !== []) {
                $this->slots = $slots;
                $this->refreshedAt = Loop::now();

                return;
            }
            $problems[] = "$name: CLUSTER SLOTS gave no slots";
        }

        throw new ConnectException('No Cluster node gave its slot map: ' . implode('; ', $problems));
    }

    private function pool(string $node): NodePool
    {
        $endpoint = $this->nodes[$node] ?? Endpoint::parse($node);

        return $this->pools[$node] ??= new NodePool($this->config->forEndpoint($endpoint), static fn(): Endpoint => $endpoint);
    }
}
