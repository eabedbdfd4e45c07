<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Loop\Loop;
use Kiln\Redis\RedisClient;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\RedisException;
use Kiln\Redis\RedisMode;
use Kiln\Redis\Resp\ErrorReply;
use Kiln\Redis\Subscriber;
use Kiln\Server\WorkerLog;
use Kiln\Store\Internal\Subscribers;

/**
 * The bus of a worker when the server is given `--redis`: Redis pub/sub, so a message reaches the
 * subscribers of its channel in every worker of every node attached to the same Redis, this one included.
 *
 * Each process SUBSCRIBEs to a channel (prefixed `kiln:bus:`) while it has a listener there, and only then:
 * the real-time layer follows a room or topic only while a worker has members in it, so Redis, which keeps the
 * subscribers of each channel, sends a room's messages only to the workers (and so the nodes) that have members
 * there. What a process publishes goes out in order on one connection, pipelined, from a Fiber of the bus's own;
 * publish() itself never waits.
 *
 * Redis unreachable: publish() throws BusException (the message is lost, and said to be) until Redis answers
 * again, which the bus checks once a second; messages queued when the connection broke are logged as lost,
 * with their count (a PUBLISH whose reply never came is never sent twice). The subscriptions come back by
 * themselves (the Subscriber resubscribes); what was published meanwhile is lost. The log has one warning when
 * Redis stops answering and one line when it answers again, not one a second: a subscription that cannot be made
 * is tried again every second, and said so the first time.
 * A subscribe() returns at once; Redis confirms it shortly after, and a message published before that is not
 * delivered to it (the Bus contract allows this for a listener added while messages flow).
 *
 * A process that ends (a worker done draining, recycled or stopped) first hands Redis what it published and Redis
 * has not taken yet, for up to EXIT_FLUSH seconds, as RelayLink does for the node's relay; what is still queued then
 * is reported lost.
 */
final class RedisBus implements ReconnectingBus
{
    public const PREFIX = 'kiln:bus:';

    /** Messages published and not yet handed to Redis, past which publish() refuses (a burst Redis cannot take). */
    private const QUEUE = 100_000;

    /** Messages sent to Redis in one pipelined write. */
    private const BATCH = 512;

    /** How long a process ending waits for Redis to take what it published. */
    private const EXIT_FLUSH = 2.0;

    private readonly Subscribers $subscribers;

    private readonly RedisClient $client;

    private readonly Subscriber $subscriber;

    /** @var list<array{string, string}> channel and payload, waiting for the sender */
    private array $queue = [];

    private bool $sending = false;

    private bool $closed = false;

    /** Why Redis is not reachable now (null: it is, as far as the bus knows). */
    private ?string $down = null;

    private ?string $probe = null;

    private int $recoveries = 0;

    /** @var array<string, true> channels subscribed at Redis (or on their way) */
    private array $following = [];

    /** The process whose exit flushes the queue (a process forked from it has a copy it must not send). */
    private ?int $exitFlushFor = null;

    /** @var (\Closure(): void)|null called once the sender Fiber has ended (the process is ending and waits for it) */
    private ?\Closure $onSent = null;

    /** @var list<\Closure(): void> onResubscribed()'s callbacks, also run when a subscription that failed succeeds */
    private array $onResubscribed = [];

    /** @var \Closure(string, string): void (level, message) */
    private readonly \Closure $log;

    /** When publishing found Redis unreachable (hrtime), for the line that says it answers again. */
    private int $downSince = 0;

    /** A PING of the probe is out: the next tick sends none (a PING may wait longer than the tick). */
    private bool $probing = false;

    /** @var array<string, true> channels whose subscription failed and is tried again (one retry at a time each) */
    private array $retrying = [];

    /** Whether the log says subscriptions fail and has not said yet that they work again. */
    private bool $subscriptionsFailing = false;

    /** The last refusal of a PUBLISH logged, when (hrtime), and how many refusals came since. */
    private string $refusal = '';
    private int $refusalLoggedAt = 0;
    private int $refusedSince = 0;

    /** @param (\Closure(string $level, string $message): void)|null $log null: the worker's error log (WorkerLog) */
    public function __construct(private readonly RedisConfig $config, ?\Closure $log = null)
    {
        $this->log = $log ?? WorkerLog::write(...);
        $this->subscribers = new Subscribers();
        $this->client = new RedisClient($config);
        $this->subscriber = new Subscriber($config);
    }

    public function publish(string $channel, string $payload): void
    {
        if ($this->closed) {
            throw new BusException("The bus is closed: the message to '$channel' was not published");
        }
        if ($this->down !== null) {
            throw new BusException("Redis is unreachable ({$this->down}): the message to '$channel' was not published");
        }
        if (\count($this->queue) >= self::QUEUE) {
            throw new BusException('The bus holds ' . self::QUEUE . " messages Redis has not taken yet: the message to '$channel' was not published");
        }
        $this->queue[] = [$channel, $payload];
        if ($this->exitFlushFor === null) {
            $this->exitFlushFor = getmypid() ?: 0;
            register_shutdown_function($this->flushAtExit(...));
        }
        if (!$this->sending) {
            $this->sending = true;
            Loop::async($this->send(...));
        }
    }

    public function subscribe(string $channel, \Closure $listener): int
    {
        $id = $this->subscribers->add($channel, $listener);
        if (!$this->closed && !isset($this->following[$channel])) {
            $this->following[$channel] = true;
            if (!isset($this->retrying[$channel])) { // else the retry under way subscribes it
                Loop::async(fn() => $this->follow($channel));
            }
        }
        return $id;
    }

    public function unsubscribe(int $id): void
    {
        $channel = $this->subscribers->channelOf($id);
        $this->subscribers->remove($id);
        if ($channel === null || $this->closed || $this->subscribers->has($channel) || !isset($this->following[$channel])) {
            return;
        }
        unset($this->following[$channel]);
        Loop::async(function () use ($channel): void {
            try {
                $this->subscriber->unsubscribe(self::PREFIX . $channel);
            } catch (RedisException) {
                // Gone with the connection: a resubscription after it only covers channels still followed.
            }
        });
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        if ($this->probe !== null) {
            Loop::cancel($this->probe);
            $this->probe = null;
        }
        $this->following = [];
        $this->subscriber->close();
        if (!$this->sending) {
            $this->client->close();
        }
    }

    /** Called once the subscriptions are back after a lost connection (Subscriber::onResubscribed()). */
    public function onResubscribed(\Closure $callback): void
    {
        $this->onResubscribed[] = $callback;
        $this->subscriber->onResubscribed($callback);
    }

    /** How many times Redis came back after the bus found it unreachable (the metrics' reconnects). */
    public function recoveries(): int
    {
        return $this->recoveries;
    }

    /** Whether Redis answered the last time the bus used it. */
    public function reachable(): bool
    {
        return $this->down === null;
    }

    /**
     * SUBSCRIBEs at Redis; when Redis cannot be reached now, tries again every second for as long as the
     * channel has listeners here (once subscribed, the Subscriber itself resubscribes after a lost connection).
     */
    private function follow(string $channel, bool $retry = false): void
    {
        if ($this->closed || !isset($this->following[$channel])) {
            unset($this->retrying[$channel]);
            if ($this->retrying === [] && $this->subscriptionsFailing) {
                $this->subscriptionsFailing = false;
                ($this->log)('info', 'node bus (Redis): no subscription is failing now (the channels that failed have no listener here any more)');
            }
            return;
        }
        try {
            $this->subscriber->subscribe(self::PREFIX . $channel, $this->received(...));
        } catch (RedisException $e) {
            $this->retrying[$channel] = true;
            if (!$this->subscriptionsFailing) {
                $this->subscriptionsFailing = true;
                ($this->log)('warning', "node bus (Redis): subscribing to '$channel' failed: {$e->getMessage()}; each subscription that fails is tried again every second");
            }
            Loop::delay(1.0, fn() => Loop::async(fn() => $this->follow($channel, true)));
            return;
        }
        unset($this->retrying[$channel]);
        if ($this->retrying === [] && $this->subscriptionsFailing) {
            $this->subscriptionsFailing = false;
            ($this->log)('info', 'node bus (Redis): the subscriptions that failed are made');
        }
        if ($retry) {
            // What was published on the channel while the subscription was failing never came here: the same gap as
            // after a lost connection, told to the same listeners (ReconnectingBus).
            foreach ($this->onResubscribed as $callback) {
                $callback();
            }
        }
    }

    private function received(string $payload, string $channel): void
    {
        $this->subscribers->deliver(substr($channel, \strlen(self::PREFIX)), $payload);
    }

    /** The bus's sender Fiber: hands the queue to Redis in order, a batch per write, until it is empty. */
    private function send(): void
    {
        try {
            while ($this->queue !== [] && $this->down === null) {
                $batch = \array_slice($this->queue, 0, self::BATCH);
                try {
                    $this->deliver($batch);
                } catch (RedisException $e) {
                    $lost = \count($this->queue);
                    $this->queue = [];
                    $this->wentDown($e->getMessage());
                    ($this->log)('warning', "node bus (Redis): Redis is unreachable ({$e->getMessage()}): $lost message(s) queued here were not confirmed"
                        . ' and may be lost, and publishing is refused until it answers again (checked every second)');
                    return;
                }
                $this->queue = \array_slice($this->queue, \count($batch));
            }
        } finally {
            $this->sending = false;
            if ($this->closed) {
                $this->client->close();
            }
            if ($this->onSent !== null) {
                ($this->onSent)();
            }
        }
    }

    /**
     * At the process's end (after the worker's loop returned): runs the loop until the sender Fiber has handed the
     * queue to Redis, for up to EXIT_FLUSH seconds. Without it, what a handler published just before its worker
     * ended (a drain, a recycle, a stop) stayed in the queue and went nowhere, silently.
     */
    private function flushAtExit(): void
    {
        if ($this->exitFlushFor !== getmypid() || (!$this->sending && $this->queue === [])) {
            return;
        }
        if ($this->sending && \Fiber::getCurrent() === null && !Loop::isRunning()) {
            $this->subscriber->close(); // nothing more is delivered here: the process is ending
            $suspension = Loop::getSuspension();
            $done = false;
            $resume = static function () use ($suspension, &$done): void {
                if (!$done) {
                    $done = true;
                    $suspension->resume();
                }
            };
            $this->onSent = $resume;
            $timer = Loop::delay(self::EXIT_FLUSH, $resume);
            try {
                $suspension->suspend();
            } catch (\Error) {
                // The loop stopped under the wait (a signal's handler): what is left is reported below.
            }
            Loop::cancel($timer);
            $this->onSent = null;
        }
        if ($this->queue !== []) {
            ($this->log)('warning', \sprintf('node bus (Redis): the process ended with %d message(s) Redis had not confirmed: they may be lost', \count($this->queue)));
        }
    }

    /**
     * @param list<array{string, string}> $batch
     * @throws RedisException
     */
    private function deliver(array $batch): void
    {
        if ($this->config->mode === RedisMode::Cluster) {
            // A Cluster forwards every PUBLISH to all its nodes; a pipeline there must stay on one slot.
            foreach ($batch as [$channel, $payload]) {
                $this->client->command('PUBLISH', self::PREFIX . $channel, $payload);
            }
            return;
        }
        $commands = [];
        foreach ($batch as [$channel, $payload]) {
            $commands[] = ['PUBLISH', self::PREFIX . $channel, $payload];
        }
        $refused = 0;
        $first = '';
        foreach ($this->client->pipeline($commands) as $reply) {
            if ($reply instanceof ErrorReply) {
                $first = $refused++ === 0 ? $reply->message : $first;
            }
        }
        if ($refused > 0) {
            $this->refused($refused, $first);
        }
    }

    /** Logs a refusal when it differs from the last one logged, or a minute after it, with the count meanwhile. */
    private function refused(int $count, string $message): void
    {
        $this->refusedSince += $count;
        $now = hrtime(true);
        if ($message === $this->refusal && $now - $this->refusalLoggedAt < 60_000_000_000) {
            return;
        }
        ($this->log)('warning', "node bus (Redis): Redis refused {$this->refusedSince} PUBLISH" . ($this->refusal === '' ? '' : ' since the last line') . ": $message");
        $this->refusal = $message;
        $this->refusalLoggedAt = $now;
        $this->refusedSince = 0;
    }

    private function wentDown(string $why): void
    {
        $this->down = $why;
        $this->downSince = hrtime(true);
        $this->probe ??= Loop::repeat(1.0, function (): void {
            if ($this->probing) {
                return; // the last PING still waits (a Redis that hangs): one at a time
            }
            $this->probing = true;
            Loop::async(function (): void {
                try {
                    $this->client->command('PING');
                } catch (RedisException) {
                    $this->probing = false;
                    return;
                }
                $this->probing = false;
                if ($this->down === null) {
                    return;
                }
                if ($this->probe !== null) {
                    Loop::cancel($this->probe);
                    $this->probe = null;
                }
                $this->down = null;
                $this->recoveries++;
                ($this->log)('info', \sprintf('node bus (Redis): Redis answers again, %.1f s after it was found unreachable; publishing works again', (hrtime(true) - $this->downSince) / 1e9));
            });
        });
    }
}
