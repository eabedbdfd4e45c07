<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Loop\Loop;

/**
 * The bus of a single process: what one worker (or a unit test) uses when there are no peers to reach.
 * Messages are queued and delivered from one deferred loop callback, in publish order.
 */
final class InProcessBus implements Bus
{
    /** @var array<string, array<int, \Closure(string, string): void>> */
    private array $listeners = [];

    /** @var array<int, string> subscription id => channel */
    private array $channels = [];

    /** @var list<array{string, string}> */
    private array $queue = [];

    private int $nextId = 1;

    private bool $scheduled = false;

    private bool $closed = false;

    private readonly \Closure $deliver;

    public function __construct()
    {
        $this->deliver = $this->deliver(...);
    }

    public function publish(string $channel, string $payload): void
    {
        if ($this->closed) {
            throw new BusException("The bus is closed: a message to '$channel' was not published");
        }
        $this->queue[] = [$channel, $payload];
        if (!$this->scheduled) {
            $this->scheduled = true;
            Loop::defer($this->deliver);
        }
    }

    public function subscribe(string $channel, \Closure $listener): int
    {
        $id = $this->nextId++;
        $this->listeners[$channel][$id] = $listener;
        $this->channels[$id] = $channel;
        return $id;
    }

    public function unsubscribe(int $id): void
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

    public function close(): void
    {
        $this->closed = true;
    }

    private function deliver(): void
    {
        $this->scheduled = false;
        $queue = $this->queue;
        $this->queue = [];
        foreach ($queue as [$channel, $payload]) {
            foreach ($this->listeners[$channel] ?? [] as $listener) {
                try {
                    $listener($channel, $payload);
                } catch (\Throwable $e) {
                    Loop::reportError($e);
                }
            }
        }
    }
}
