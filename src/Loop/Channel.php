<?php

declare(strict_types=1);

namespace Kiln\Loop;

/**
 * A bounded FIFO between Fibers. send() suspends while the buffer is full (with capacity 0, until a
 * receiver takes the value); receive() suspends while it is empty. close() wakes every waiter with
 * ChannelClosedException; values already buffered can still be received. Iterating receives until
 * the channel is closed and drained.
 *
 * @template T
 *
 * @implements \IteratorAggregate<int, T>
 */
final class Channel implements \IteratorAggregate
{
    /** @var \SplQueue<T> */
    private readonly \SplQueue $buffer;
    /** @var Fifo<Suspension> */
    private readonly Fifo $receivers;
    /** @var Fifo<array{Suspension, T}> */
    private readonly Fifo $senders;
    private bool $closed = false;

    public function __construct(private readonly int $capacity = 0)
    {
        if ($capacity < 0) {
            throw new \ValueError('Channel capacity must be >= 0');
        }
        $this->buffer = new \SplQueue();
        $this->receivers = new Fifo();
        $this->senders = new Fifo();
    }

    /**
     * @param T $value
     *
     * @throws ChannelClosedException
     */
    public function send(mixed $value, ?Cancellation $cancellation = null): void
    {
        if ($this->closed) {
            throw new ChannelClosedException('Cannot send on a closed channel');
        }
        $receiver = $this->receivers->shift();
        if ($receiver !== null) {
            $receiver->resume($value);

            return;
        }
        if ($this->buffer->count() < $this->capacity) {
            $this->buffer->enqueue($value);

            return;
        }
        $cancellation?->throwIfRequested();
        $suspension = Loop::getSuspension();
        $id = $this->senders->push([$suspension, $value]);
        $this->wait($suspension, $id, $cancellation, false);
    }

    /**
     * @return T
     *
     * @throws ChannelClosedException when closed and drained
     */
    public function receive(?Cancellation $cancellation = null): mixed
    {
        if (!$this->buffer->isEmpty()) {
            $value = $this->buffer->dequeue();
            $waiting = $this->senders->shift(); // one sender may refill the slot
            if ($waiting !== null) {
                [$sender, $pending] = $waiting;
                $this->buffer->enqueue($pending);
                $sender->resume();
            }

            return $value;
        }
        $waiting = $this->senders->shift();
        if ($waiting !== null) {
            [$sender, $pending] = $waiting;
            $sender->resume();

            return $pending;
        }
        if ($this->closed) {
            throw new ChannelClosedException('The channel is closed');
        }
        $cancellation?->throwIfRequested();
        $suspension = Loop::getSuspension();
        $id = $this->receivers->push($suspension);

        /** @var T */
        return $this->wait($suspension, $id, $cancellation, true);
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        $waiters = [...$this->receivers->drain(), ...\array_column($this->senders->drain(), 0)];
        foreach ($waiters as $waiter) {
            $waiter->throw(new ChannelClosedException('The channel was closed while waiting'));
        }
    }

    public function isClosed(): bool
    {
        return $this->closed;
    }

    /** @return \Generator<int, T> */
    public function getIterator(): \Generator
    {
        while (true) {
            try {
                $value = $this->receive();
            } catch (ChannelClosedException) {
                return;
            }
            yield $value;
        }
    }

    private function wait(Suspension $suspension, int $id, ?Cancellation $cancellation, bool $receiving): mixed
    {
        $queue = $receiving ? $this->receivers : $this->senders;
        $subscription = $cancellation?->subscribe(static function (CancelledException $e) use ($queue, $id, $suspension): void {
            if ($queue->remove($id)) {
                $suspension->throw($e);
            }
        });
        try {
            return $suspension->suspend();
        } finally {
            $queue->remove($id);
            if ($subscription !== null) {
                $cancellation?->unsubscribe($subscription);
            }
        }
    }
}
