<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

use Kiln\Loop\Loop;

/**
 * The listeners of one process's bus, by channel: subscribe/unsubscribe and delivery, where a listener
 * that throws is reported to the loop and the next one still runs. What this process publishes itself is
 * delivered later (deliverLater()), from one deferred loop callback, in publish order.
 *
 * @internal
 */
final class Subscribers
{
    /** @var array<string, array<int, \Closure(string, string): void>> */
    private array $listeners = [];

    /** @var array<int, string> subscription id => channel */
    private array $channels = [];

    private int $nextId = 1;

    /** @var list<array{string, string}> published here, not yet delivered here */
    private array $later = [];

    private bool $scheduled = false;

    private readonly \Closure $deliverQueued;

    public function __construct()
    {
        $this->deliverQueued = $this->deliverQueued(...);
    }

    /** @param \Closure(string, string): void $listener */
    public function add(string $channel, \Closure $listener): int
    {
        $id = $this->nextId++;
        $this->listeners[$channel][$id] = $listener;
        $this->channels[$id] = $channel;
        return $id;
    }

    public function remove(int $id): void
    {
        $channel = $this->channels[$id] ?? null;
        if ($channel === null) {
            return;
        }
        unset($this->channels[$id], $this->listeners[$channel][$id]);
        if ($this->listeners[$channel] === []) {
            unset($this->listeners[$channel]);
        }
    }

    /** The channel of a subscription, or null when it is unknown (or was removed). */
    public function channelOf(int $id): ?string
    {
        return $this->channels[$id] ?? null;
    }

    /** Whether the channel has a listener left. */
    public function has(string $channel): bool
    {
        return isset($this->listeners[$channel]);
    }

    /** A listener removed by an earlier one during this delivery is not called. */
    public function deliver(string $channel, string $payload): void
    {
        foreach ($this->listeners[$channel] ?? [] as $id => $listener) {
            if (!isset($this->listeners[$channel][$id])) {
                continue;
            }
            try {
                $listener($channel, $payload);
            } catch (\Throwable $e) {
                Loop::reportError($e);
            }
        }
    }

    /** Delivers from the loop, never inside the caller (the Bus contract for a process's own messages). */
    public function deliverLater(string $channel, string $payload): void
    {
        $this->later[] = [$channel, $payload];
        if (!$this->scheduled) {
            $this->scheduled = true;
            Loop::defer($this->deliverQueued);
        }
    }

    private function deliverQueued(): void
    {
        $this->scheduled = false;
        $later = $this->later;
        $this->later = [];
        foreach ($later as [$channel, $payload]) {
            $this->deliver($channel, $payload);
        }
    }
}
