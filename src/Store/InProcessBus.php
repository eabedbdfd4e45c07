<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Store\Internal\Subscribers;

/**
 * The bus of a single process: what one worker (or a unit test) uses when there are no peers to reach.
 * Messages are queued and delivered from one deferred loop callback, in publish order.
 */
final class InProcessBus implements Bus
{
    private readonly Subscribers $subscribers;

    private bool $closed = false;

    public function __construct()
    {
        $this->subscribers = new Subscribers();
    }

    public function publish(string $channel, string $payload): void
    {
        if ($this->closed) {
            throw new BusException("The bus is closed: a message to '$channel' was not published");
        }
        $this->subscribers->deliverLater($channel, $payload);
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

}
