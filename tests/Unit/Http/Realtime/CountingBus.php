<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime;

use Kiln\Store\Bus;
use Kiln\Store\InProcessBus;

/** An InProcessBus that counts the subscriptions held on each channel. */
final class CountingBus implements Bus
{
    /** @var array<int, string> */
    private array $held = [];

    public function __construct(private readonly InProcessBus $bus = new InProcessBus()) {}

    public function held(string $channel): int
    {
        return \count(array_keys($this->held, $channel, true));
    }

    public function publish(string $channel, string $payload): void
    {
        $this->bus->publish($channel, $payload);
    }

    public function subscribe(string $channel, \Closure $listener): int
    {
        $id = $this->bus->subscribe($channel, $listener);
        $this->held[$id] = $channel;
        return $id;
    }

    public function unsubscribe(int $id): void
    {
        unset($this->held[$id]);
        $this->bus->unsubscribe($id);
    }

    public function close(): void
    {
        $this->bus->close();
    }
}
