<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime;

use Kiln\Store\InProcessBus;
use Kiln\Store\ReconnectingBus;

/** An InProcessBus that loses what is published while cut(), as RedisBus does while its connection is down. */
final class GappyBus implements ReconnectingBus
{
    private bool $cut = false;

    /** @var list<\Closure(): void> */
    private array $onResubscribed = [];

    public function __construct(private readonly InProcessBus $bus = new InProcessBus()) {}

    public function cut(): void
    {
        $this->cut = true;
    }

    /** Following again: what is published from now on arrives; the callbacks run first. */
    public function resubscribed(): void
    {
        $this->cut = false;
        foreach ($this->onResubscribed as $callback) {
            $callback();
        }
    }

    public function onResubscribed(\Closure $callback): void
    {
        $this->onResubscribed[] = $callback;
    }

    public function publish(string $channel, string $payload): void
    {
        if (!$this->cut) {
            $this->bus->publish($channel, $payload);
        }
    }

    public function subscribe(string $channel, \Closure $listener): int
    {
        return $this->bus->subscribe($channel, $listener);
    }

    public function unsubscribe(int $id): void
    {
        $this->bus->unsubscribe($id);
    }

    public function close(): void
    {
        $this->bus->close();
    }
}
