<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

use Kiln\Loop\Loop;

/**
 * The listeners of one process's bus, by channel: subscribe/unsubscribe and delivery, where a listener
 * that throws is reported to the loop and the next one still runs.
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
}
