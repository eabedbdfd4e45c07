<?php

declare(strict_types=1);

namespace Kiln\Db\Internal;

use Kiln\Loop\Cancellation;
use Kiln\Loop\DeferredCancellation;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutException;

/**
 * The statement timeout of a connection: requested once one wait for the server (a statement, a stream's first
 * row, or its next one after the caller took one) lasts $seconds. The time the caller spends between rows does not count: waiting()
 * starts a wait, paused() ends it. Its one timer is armed while a wait is on and re-armed, when it fires early, for
 * what is left of the wait now on; it never keeps the loop alive (the socket the stream reads does), and stop()
 * cancels it.
 *
 * @internal used by TimedConnection
 */
final class ServerWait
{
    private readonly DeferredCancellation $source;

    private ?string $timer = null;

    /** When the wait now on began (hrtime, seconds), null between waits. */
    private ?float $since = null;

    public function __construct(private readonly float $seconds)
    {
        $this->source = new DeferredCancellation();
    }

    /** What the stream is given: requested when a wait lasts the timeout. */
    public function cancellation(): Cancellation
    {
        return $this->source->getCancellation();
    }

    public function waiting(): void
    {
        // The clock itself, not Loop::now(), which stands still for a loop turn: a caller that works between rows
        // without letting the loop run (a blocking call, a long computation) must not have that counted as a wait.
        $this->since = \hrtime(true) / 1e9;
        if ($this->timer === null && !$this->source->isCancelled()) {
            $this->arm($this->seconds);
        }
    }

    public function paused(): void
    {
        $this->since = null;
    }

    public function stop(): void
    {
        $this->since = null;
        if ($this->timer !== null) {
            Loop::cancel($this->timer);
            $this->timer = null;
        }
    }

    private function arm(float $seconds): void
    {
        $this->timer = Loop::delay($seconds, $this->fire(...));
        Loop::unreference($this->timer);
    }

    private function fire(): void
    {
        $this->timer = null;
        if ($this->since === null) {
            return; // between waits: the next one arms it again
        }
        $left = $this->since + $this->seconds - \hrtime(true) / 1e9;
        if ($left > 0) {
            $this->arm($left); // a later wait than the one it was armed for
            return;
        }
        $this->source->cancel(new TimeoutException('The statement timeout passed'));
    }
}
