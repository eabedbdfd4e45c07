<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Internal\Canceller;

/**
 * Requested with a TimeoutException after $seconds. Its timer keeps the loop alive only while
 * something is subscribed (i.e. an operation is waiting on it), and is cancelled on destruction.
 */
final class TimeoutCancellation implements Cancellation
{
    private readonly Canceller $canceller;
    private readonly string $timer;

    public function __construct(float $seconds, string $message = 'The operation timed out')
    {
        $canceller = $this->canceller = new Canceller();
        $this->timer = Loop::delay($seconds, static function () use ($canceller, $message): void {
            $canceller->cancel(new TimeoutException($message));
        });
        Loop::unreference($this->timer);
    }

    public function __destruct()
    {
        Loop::cancel($this->timer);
    }

    public function subscribe(\Closure $callback): string
    {
        $id = $this->canceller->subscribe($callback);
        Loop::reference($this->timer);

        return $id;
    }

    public function unsubscribe(string $id): void
    {
        $this->canceller->unsubscribe($id);
        if ($this->canceller->subscriberCount() === 0) {
            Loop::unreference($this->timer);
        }
    }

    public function isRequested(): bool
    {
        return $this->canceller->isRequested();
    }

    public function throwIfRequested(): void
    {
        $this->canceller->throwIfRequested();
    }
}
