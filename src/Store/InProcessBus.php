<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Loop\Loop;
use Kiln\Store\Internal\Subscribers;

/**
 * The bus of a single process: what one worker (or a unit test) uses when there are no peers to reach.
 * Messages are queued and delivered from one deferred loop callback, in publish order.
 */
final class InProcessBus implements Bus
{
    private readonly Subscribers $subscribers;

    /** @var list<array{string, string}> */
    private array $queue = [];

    private bool $scheduled = false;

    private bool $closed = false;

    private readonly \Closure $deliver;

    public function __construct()
    {
        $this->subscribers = new Subscribers();
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
        return $this->subscribers->add($channel, $listener);
    }

    public function unsubscribe(int $id): void
    {
        $this->subscribers->remove($id);
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
            $this->subscribers->deliver($channel, $payload);
        }
    }
}
