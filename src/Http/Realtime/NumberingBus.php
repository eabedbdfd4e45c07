<?php

declare(strict_types=1);

namespace Kiln\Http\Realtime;

use Kiln\Store\Bus;
use Kiln\Store\BusException;
use Kiln\Store\ReconnectingBus;

/**
 * A worker's node bus as its App sets it: every message passes through to the node bus, except the events
 * scripts publish (ScriptPublisher::event()), which the worker's Hub publishes instead, with the topic's
 * next id. A script's event thus reaches the bus once, numbered, from the worker that took it (in the
 * worker itself for the sequential tier, through the worker's gateway for the isolated and fork tiers).
 * The App sets it as the worker's NodeBus when the worker configures it.
 */
final class NumberingBus implements ReconnectingBus
{
    /** @param \Closure(): Hub $hub */
    public function __construct(private readonly Bus $bus, private readonly \Closure $hub) {}

    public function publish(string $channel, string $payload): void
    {
        if (!str_starts_with($channel, ScriptPublisher::EVENTS)) {
            $this->bus->publish($channel, $payload);
            return;
        }
        $newline = strpos($payload, "\n");
        if ($newline === false) {
            throw new BusException("An event for '$channel' needs its name, a line feed, then its data");
        }
        $event = substr($payload, 0, $newline);
        try {
            ($this->hub)()->publish(substr($channel, \strlen(ScriptPublisher::EVENTS)), substr($payload, $newline + 1), $event === '' ? null : $event);
        } catch (BusException $e) {
            throw $e;
        } catch (\Throwable $e) {
            throw new BusException("The event for '$channel' was not published: " . $e->getMessage(), 0, $e);
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

    /** The node bus's, when it has gaps to tell of (Redis); never called on one that has none. */
    public function onResubscribed(\Closure $callback): void
    {
        if ($this->bus instanceof ReconnectingBus) {
            $this->bus->onResubscribed($callback);
        }
    }
}
