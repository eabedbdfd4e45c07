<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Loop\Loop;

/**
 * The idle grace of a drain (HttpCore::startDraining()): how long idle connections stay open, and a response that
 * promised keep-alive keeps its connection, before the idle ones are closed.
 *
 * @internal
 */
final class DrainGrace
{
    private ?string $timer = null;

    /** When the grace ends (Loop::now()'s clock); 0 before a drain. */
    private float $endsAt = 0.0;

    private float $seconds = 0.0;

    /** Starts it: from now on running() says whether it still runs. */
    public function begin(float $seconds): void
    {
        $this->seconds = $seconds;
        $this->endsAt = Loop::now() + $seconds;
    }

    /**
     * Runs $onEnd when the grace ends, at once for a grace of none; with $wait false nothing is left to close then,
     * and no timer runs.
     *
     * @param \Closure(): void $onEnd
     */
    public function whenOver(bool $wait, \Closure $onEnd): void
    {
        if ($this->seconds <= 0.0) {
            $onEnd();
        } elseif ($wait) {
            $this->timer = Loop::delay(max(0.0, $this->endsAt - Loop::now()), function () use ($onEnd): void {
                $this->timer = null;
                $onEnd();
            });
        }
    }

    /** Whether the grace still runs. */
    public function running(): bool
    {
        return Loop::now() < $this->endsAt;
    }

    public function cancel(): void
    {
        if ($this->timer !== null) {
            Loop::cancel($this->timer);
            $this->timer = null;
        }
    }
}
