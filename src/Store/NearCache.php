<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * The node-local first level of a Cache whose Store is remote (Redis): entries read from the Store are kept in
 * the node's own memory (APCu or the /dev/shm table, shared by the node's workers) for at most $ttl seconds, and
 * every write, delete or tag invalidation made anywhere is sent to the other nodes on the bus, which drop their
 * copies at once.
 *
 * The bound: a value written on another node is served here until its invalidation arrives (the bus's delay, a few
 * milliseconds) and, if that message is lost (Redis away, a subscription not yet confirmed), for at most $ttl
 * seconds after this node copied it. Nothing older than that is ever served.
 *
 * With a secret (KILN_REDIS_SECRET), invalidations are signed with HMAC-SHA256 and one that is unsigned or signed
 * otherwise is ignored (and reported): whoever can publish on the Redis cannot make the nodes do anything but drop
 * copies, and with a secret not even that.
 */
final class NearCache
{
    public const CHANNEL = 'cache:invalidate';

    private const ENTRY = 'near:';

    private const TAG = 'near-tag:';

    private ?int $subscription = null;

    public function __construct(
        private readonly Store $local,
        private readonly Bus $bus,
        private readonly string $node,
        private readonly int $ttl = 5,
        private readonly ?string $secret = null,
    ) {
        if ($ttl < 1) {
            throw new \ValueError("A near cache keeps copies for at least 1 second, got $ttl");
        }
    }

    /** @return array{bool, mixed} found, value */
    public function get(string $key): array
    {
        $this->listen();
        $entry = $this->local->get(self::ENTRY . $key);
        if (!\is_array($entry) || !\array_key_exists('v', $entry)) {
            return [false, null];
        }
        foreach (\is_array($entry['g'] ?? null) ? $entry['g'] : [] as $tag => $generation) {
            if (($this->local->get(self::TAG . $tag) ?? 0) !== $generation) {
                return [false, null];
            }
        }
        return [true, $entry['v']];
    }

    /**
     * Keeps a copy of what the Store holds under $key (read just now, with these tags).
     *
     * @param list<string> $tags
     */
    public function put(string $key, mixed $value, array $tags): void
    {
        $generations = [];
        foreach ($tags as $tag) {
            $generation = $this->local->get(self::TAG . $tag) ?? 0;
            $generations[$tag] = \is_int($generation) ? $generation : 0;
        }
        try {
            $this->local->set(self::ENTRY . $key, $generations === [] ? ['v' => $value] : ['v' => $value, 'g' => $generations], $this->ttl);
        } catch (\ValueError) {
            // Too large for the node's memory: the Store still has it.
        }
    }

    /** The keys changed (written or deleted) here: dropped here, and on the other nodes through the bus. */
    public function forget(string ...$keys): void
    {
        foreach ($keys as $key) {
            $this->local->delete(self::ENTRY . $key);
        }
        $this->send(['k' => array_values($keys)]);
    }

    /** The tags invalidated here: their copies stop counting here, and on the other nodes through the bus. */
    public function forgetTags(string ...$tags): void
    {
        foreach ($tags as $tag) {
            $this->local->increment(self::TAG . $tag);
        }
        $this->send(['t' => array_values($tags)]);
    }

    /** Applies an invalidation from the bus: '<signature or ->' LF '<json>'. */
    public function receive(string $payload): void
    {
        $newline = strpos($payload, "\n");
        $signature = $newline === false ? '' : substr($payload, 0, $newline);
        $json = $newline === false ? '' : substr($payload, $newline + 1);
        if ($this->secret !== null && !hash_equals(hash_hmac('sha256', $json, $this->secret), $signature)) {
            throw new StoreException('A cache invalidation without a valid signature was ignored (is KILN_REDIS_SECRET the same on every node?)');
        }
        $message = json_decode($json, true);
        if (!\is_array($message) || ($message['n'] ?? null) === $this->node) {
            return; // not ours to read, or this node's own (its copies went already)
        }
        foreach (\is_array($message['k'] ?? null) ? $message['k'] : [] as $key) {
            \is_string($key) && $this->local->delete(self::ENTRY . $key);
        }
        foreach (\is_array($message['t'] ?? null) ? $message['t'] : [] as $tag) {
            \is_string($tag) && $this->local->increment(self::TAG . $tag);
        }
    }

    /** @param array<string, list<string>> $change */
    private function send(array $change): void
    {
        $this->listen();
        $json = json_encode(['n' => $this->node] + $change, \JSON_THROW_ON_ERROR | \JSON_UNESCAPED_UNICODE | \JSON_INVALID_UTF8_SUBSTITUTE);
        $signature = $this->secret === null ? '-' : hash_hmac('sha256', $json, $this->secret);
        try {
            $this->bus->publish(self::CHANNEL, "$signature\n$json");
        } catch (BusException) {
            // The other nodes' copies then last their TTL: the documented bound.
        }
    }

    /**
     * Follows the invalidations from now on (a worker calls it at start, so that a copy it makes is never missed by
     * a subscription still on its way; otherwise the first use does). The bus needs the process's loop.
     */
    public function listen(): void
    {
        $this->subscription ??= $this->bus->subscribe(self::CHANNEL, function (string $channel, string $payload): void {
            $this->receive($payload);
        });
    }
}
