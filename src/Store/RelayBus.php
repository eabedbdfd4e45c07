<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Loop\Loop;
use Kiln\Server\RelayLink;
use Kiln\Server\ServerException;
use Kiln\Store\Internal\BusMessage;
use Kiln\Store\Internal\Subscribers;

/**
 * The bus of a worker on a node: what it publishes goes, as one frame, to the supervisor, which hands it to
 * every other worker of the node (Kiln\Server\BusRelay); its own subscribers get it from a deferred loop
 * callback, as with InProcessBus. Why through the supervisor: docs/design/012-node-bus.md.
 *
 * publish() fails with BusException, and the message goes nowhere (not even to this process), when the
 * link is closed (the supervisor is gone, or close() was called) or its queue to the supervisor is full.
 * A worker that does not read its socket loses messages at the supervisor, which logs how many.
 */
final class RelayBus implements Bus
{
    private readonly Subscribers $subscribers;

    private bool $closed = false;

    public function __construct(private readonly RelayLink $link)
    {
        $this->subscribers = new Subscribers();
        $link->receive($this->receive(...));
    }

    public function publish(string $channel, string $payload): void
    {
        if ($this->closed) {
            throw new BusException("The bus is closed: a message to '$channel' was not published");
        }
        try {
            $this->link->send(BusMessage::encode($channel, $payload));
        } catch (ServerException $e) {
            throw new BusException("A message to '$channel' was not published: {$e->getMessage()}", 0, $e);
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

    /** Detaches this process: it publishes no more and hears nothing more from the others. */
    public function close(): void
    {
        $this->closed = true;
        $this->link->receive(null);
    }


    /** @param list<string> $bodies */
    private function receive(array $bodies): void
    {
        foreach ($bodies as $body) {
            try {
                [$channel, $payload] = BusMessage::decode($body);
            } catch (BusException $e) {
                Loop::reportError($e);
                continue;
            }
            $this->subscribers->deliver($channel, $payload);
        }
    }
}
