<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Redis\Commands;
use Kiln\Redis\ErrorReplyException;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\RedisException;
use Kiln\Redis\Resp\ErrorReply;
use Kiln\Redis\Script;
use Kiln\Redis\SyncRedisClient;
use Kiln\Server\WorkerLog;
use Kiln\Store\Internal\Values;

/**
 * The Store on Redis: the same keys for every worker of every node given the same `--redis`, so Counter, Cache,
 * locks and sessions built on it span the nodes.
 *
 * Encoding, chosen so that other Redis clients read what matters to them: an integer is its decimal digits
 * (INCRBY works on it, and `GET` shows the number); a string is stored as it is (a session is byte for byte what
 * php-redis's session handler writes), unless it would read back as an integer or starts with NUL, in which case it
 * is NUL + "s" + the string; any other value is NUL + "v" + PHP's serialize() (scalars and arrays only, read back
 * without objects).
 *
 * Atomicity: increment() and compareAndSet() are Lua scripts (EVALSHA), so they are atomic against every other
 * client. Bound: Redis's own `maxmemory`; with a `volatile-ttl` policy it evicts the soonest to expire first, as the
 * node-local stores do, and evictions() reads Redis's `evicted_keys` (server-wide, since this store first
 * connected). With `noeviction`, a write Redis refuses throws StoreException: nothing is dropped silently.
 *
 * Each process (a worker, a forked child) gets its own connection, made on first use. The calls are
 * synchronous: each waits for its reply (a round trip on a nearby Redis), which keeps them usable from every tier.
 */
final class RedisStore implements Store
{
    private const INTEGER = '/\A(?:0|-?[1-9][0-9]{0,18})\z/';

    /** ARGV: expected (encoded), expected is absent (1/0), new (encoded), delete (1/0), ttl */
    private const COMPARE_AND_SET = <<<'LUA'
        local current = redis.call('GET', KEYS[1])
        if ARGV[2] == '1' then
            if current then return 0 end
        elseif current ~= ARGV[1] then
            return 0
        end
        if ARGV[4] == '1' then
            redis.call('DEL', KEYS[1])
        elseif tonumber(ARGV[5]) > 0 then
            redis.call('SET', KEYS[1], ARGV[3], 'EX', ARGV[5])
        else
            redis.call('SET', KEYS[1], ARGV[3])
        end
        return 1
        LUA;

    private ?Commands $redis = null;

    private int $pid = 0;

    private int $evictedBefore = 0;

    private bool $down = false;

    private int $recoveries = 0;

    private readonly Script $compareAndSet;

    /** @var \Closure(string, string): void (level, message) */
    private readonly \Closure $log;

    /** When a call found Redis unreachable (hrtime), for the line that says it answers again. */
    private int $downSince = 0;

    /**
     * @param \Closure(): Commands $connect makes this process's connection
     * @param string $prefix put before every key (sessions need none: php-redis's keys have no prefix of Kiln's)
     * @param (\Closure(string $level, string $message): void)|null $log null: the worker's error log (WorkerLog)
     */
    public function __construct(
        private readonly \Closure $connect,
        private readonly string $prefix = '',
        private readonly int $maxValueBytes = 1 << 20,
        ?\Closure $log = null,
    ) {
        $this->compareAndSet = new Script(self::COMPARE_AND_SET);
        $this->log = $log ?? WorkerLog::write(...);
    }

    /** @param (\Closure(string $level, string $message): void)|null $log null: the worker's error log (WorkerLog) */
    public static function connect(RedisConfig $config, string $prefix = '', ?\Closure $log = null): self
    {
        return new self(static fn(): Commands => new SyncRedisClient($config), $prefix, log: $log);
    }

    public function get(string $key): mixed
    {
        $value = $this->call('GET', $this->prefix . $key);
        return \is_string($value) ? self::decode($value) : null;
    }

    public function set(string $key, mixed $value, int $ttl = 0): void
    {
        Values::check($value, $this->maxValueBytes);
        Values::ttl($ttl);
        $ttl > 0
            ? $this->call('SET', $this->prefix . $key, self::encode($value), 'EX', $ttl)
            : $this->call('SET', $this->prefix . $key, self::encode($value));
    }

    public function add(string $key, mixed $value, int $ttl = 0): bool
    {
        Values::check($value, $this->maxValueBytes);
        Values::ttl($ttl);
        $reply = $ttl > 0
            ? $this->call('SET', $this->prefix . $key, self::encode($value), 'NX', 'EX', $ttl)
            : $this->call('SET', $this->prefix . $key, self::encode($value), 'NX');
        return $reply !== null;
    }

    public function delete(string $key): bool
    {
        return $this->call('DEL', $this->prefix . $key) === 1;
    }

    public function increment(string $key, int $by = 1, int $ttl = 0): int
    {
        Values::ttl($ttl);
        // INCRBY answers the exact 64-bit result (a Lua script's numbers are doubles); a new key gets its TTL
        // from SET NX in the same transaction.
        $commands = $ttl > 0
            ? [['MULTI'], ['SET', $this->prefix . $key, '0', 'NX', 'EX', $ttl], ['INCRBY', $this->prefix . $key, $by], ['EXEC']]
            : [['INCRBY', $this->prefix . $key, $by]];
        try {
            $replies = $this->redis()->pipeline($commands);
        } catch (RedisException $e) {
            throw $this->failed($e);
        }
        $this->answered();
        $reply = $ttl > 0 ? (\is_array($replies[3] ?? null) ? ($replies[3][1] ?? null) : ($replies[3] ?? null)) : ($replies[0] ?? null);
        if ($reply instanceof ErrorReply) {
            if (str_contains($reply->message, 'not an integer') || str_contains($reply->message, 'overflow')) {
                throw new \ValueError("The key '$key' does not hold an integer (or the sum leaves the 64-bit range): not an integer");
            }
            throw new StoreException('Redis refused an increment: ' . $reply->message);
        }
        if (!\is_int($reply)) {
            throw new StoreException('Redis answered INCRBY with something else than an integer');
        }
        return $reply;
    }

    public function compareAndSet(string $key, mixed $expected, mixed $new, int $ttl = 0): bool
    {
        if ($new !== null) {
            Values::check($new, $this->maxValueBytes);
        }
        Values::ttl($ttl);
        $args = [
            $expected === null ? '' : self::encode($expected), $expected === null ? '1' : '0',
            $new === null ? '' : self::encode($new), $new === null ? '1' : '0', $ttl,
        ];
        try {
            $written = $this->compareAndSet->run($this->redis(), [$this->prefix . $key], $args) === 1;
        } catch (RedisException $e) {
            throw $this->failed($e);
        }
        $this->answered();
        return $written;
    }

    public function count(): int
    {
        if ($this->prefix === '') {
            $size = $this->call('DBSIZE');
            return \is_int($size) ? $size : throw new StoreException('Redis answered DBSIZE with something else than an integer');
        }
        $count = 0;
        $cursor = '';
        do {
            [$cursor, $keys] = $this->scan($cursor, 1000);
            $count += \count($keys);
        } while ($cursor !== '');
        return $count;
    }

    public function scan(string $cursor = '', int $limit = 100): array
    {
        $reply = $this->call('SCAN', $cursor === '' ? '0' : $cursor, 'MATCH', self::glob($this->prefix) . '*', 'COUNT', max(1, $limit));
        if (!\is_array($reply) || !\is_string($reply[0] ?? null) || !\is_array($reply[1] ?? null)) {
            throw new StoreException('Redis answered SCAN with something else than a cursor and keys');
        }
        $keys = [];
        foreach ($reply[1] as $key) {
            $keys[] = substr(\is_string($key) ? $key : '', \strlen($this->prefix));
        }
        return [$reply[0] === '0' ? '' : $reply[0], $keys];
    }

    public function evictions(): int
    {
        return $this->evictedKeys() - $this->evictedBefore;
    }

    private function evictedKeys(): int
    {
        $info = $this->call('INFO', 'stats');
        $info = \is_string($info) ? $info : '';
        return preg_match('/^evicted_keys:(\d+)/m', $info, $m) === 1 ? (int) $m[1] : 0;
    }

    private function redis(): Commands
    {
        $pid = (int) getmypid();
        if ($this->redis === null || $this->pid !== $pid) {
            // A forked child must not share its parent's socket: replies would go to whichever reads first.
            $first = $this->redis === null;
            $this->redis = ($this->connect)();
            $this->pid = $pid;
            if ($first) {
                $this->evictedBefore = $this->evictedKeys();
            }
        }
        return $this->redis;
    }

    private function call(string|int ...$args): mixed
    {
        try {
            $reply = $this->redis()->command(...$args);
        } catch (RedisException $e) {
            throw $this->failed($e);
        }
        $this->answered();
        return $reply;
    }

    /** Whether Redis answered the last call (false after a call it did not answer, until one it does). */
    public function reachable(): bool
    {
        return !$this->down;
    }

    /** How many times Redis answered again after a call it did not answer. */
    public function recoveries(): int
    {
        return $this->recoveries;
    }

    private function answered(): void
    {
        if ($this->down) {
            $this->down = false;
            $this->recoveries++;
            ($this->log)('info', \sprintf('Store (Redis): Redis answers again, %.1f s after it was found unreachable', (hrtime(true) - $this->downSince) / 1e9));
        }
    }

    private function failed(RedisException $e): StoreException
    {
        if (!$e instanceof ErrorReplyException && !$this->down) { // an error reply is an answer
            $this->down = true;
            $this->downSince = hrtime(true);
            ($this->log)('warning', "Store (Redis): Redis is unreachable ({$e->getMessage()}): what uses the Store (sessions, counters, cache, locks) fails until it answers again");
        }
        return new StoreException('Redis: ' . $e->getMessage(), 0, $e);
    }

    private static function encode(mixed $value): string
    {
        if (\is_int($value)) {
            return (string) $value;
        }
        if (\is_string($value)) {
            return ($value !== '' && $value[0] === "\0") || preg_match(self::INTEGER, $value) === 1 ? "\0s" . $value : $value;
        }
        return "\0v" . serialize($value);
    }

    private static function decode(string $stored): mixed
    {
        if ($stored !== '' && $stored[0] === "\0") {
            return match ($stored[1] ?? '') {
                's' => substr($stored, 2),
                'v' => unserialize(substr($stored, 2), ['allowed_classes' => false]),
                default => $stored,
            };
        }
        return preg_match(self::INTEGER, $stored) === 1 ? (int) $stored : $stored;
    }

    /** The prefix as a literal in a SCAN MATCH pattern. */
    private static function glob(string $prefix): string
    {
        return addcslashes($prefix, '*?[]\\');
    }
}
