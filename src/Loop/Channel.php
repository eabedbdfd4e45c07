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
    /** @var array<int, Suspension> */
    private array $receivers = [];
    /** @var array<int, array{Suspension, T}> */
    private array $senders = [];
    private int $nextId = 0;
    private bool $closed = false;

    public function __construct(private readonly int $capacity = 0)
    {
        if ($capacity < 0) {
            throw new \ValueError('Channel capacity must be >= 0');
        }
        $this->buffer = new \SplQueue();
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
        foreach ($this->receivers as $id => $receiver) {
            unset($this->receivers[$id]);
            $receiver->resume($value);

            return;
        }
        if ($this->buffer->count() < $this->capacity) {
            $this->buffer->enqueue($value);

            return;
        }
        $cancellation?->throwIfRequested();
        $suspension = Loop::getSuspension();
        $id = $this->nextId++;
        $this->senders[$id] = [$suspension, $value];
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
            foreach ($this->senders as $id => [$sender, $pending]) { // one sender may refill the slot
                unset($this->senders[$id]);
                $this->buffer->enqueue($pending);
                $sender->resume();
                break;
            }

            return $value;
        }
        foreach ($this->senders as $id => [$sender, $pending]) {
            unset($this->senders[$id]);
            $sender->resume();

            return $pending;
        }
        if ($this->closed) {
            throw new ChannelClosedException('The channel is closed');
        }
        $cancellation?->throwIfRequested();
        $suspension = Loop::getSuspension();
        $id = $this->nextId++;
        $this->receivers[$id] = $suspension;

        /** @var T */
        return $this->wait($suspension, $id, $cancellation, true);
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        $waiters = [...\array_values($this->receivers), ...\array_column($this->senders, 0)];
        $this->receivers = $this->senders = [];
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
        $subscription = $cancellation?->subscribe(function (CancelledException $e) use ($id, $receiving, $suspension): void {
            $queued = $receiving ? isset($this->receivers[$id]) : isset($this->senders[$id]);
            unset($this->receivers[$id], $this->senders[$id]);
            if ($queued) {
                $suspension->throw($e);
            }
        });
        try {
            return $suspension->suspend();
        } finally {
            unset($this->receivers[$id], $this->senders[$id]);
            if ($subscription !== null) {
                $cancellation?->unsubscribe($subscription);
            }
        }
    }
}
