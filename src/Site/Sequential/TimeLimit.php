<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

/**
 * A wall-clock limit for a script running in the worker, which the CLI does not have (max_execution_time
 * counts CPU time, and is 0 there). arm() starts SIGALRM (whole seconds, rounded up) and turns asynchronous
 * signals on, so the handler runs at the next instruction of the script; the handler is installed without
 * SA_RESTART, so sleep(), a blocking read or a database wait returns early instead of finishing first.
 * disarm() turns async signals back off (the event loop dispatches signals itself, synchronously). The event
 * loop never uses SIGALRM.
 *
 * Cheap per request (one alarm() call): the handler stays installed, and an alarm left pending after a
 * quick script fires later into a handler that ignores it (or is replaced by the next arm()).
 *
 * The callback must not return into the script: it answers the request and ends the process (a script
 * stopped at an arbitrary instruction leaves state no reset can trust). A script blocked inside an
 * extension call that retries on EINTR is stopped only when that call returns.
 *
 * @api reused by the fork tier
 */
final class TimeLimit
{
    /** @var (\Closure(): void)|null what to do on timeout while armed */
    private ?\Closure $onTimeout = null;

    private ?\Closure $handler = null;

    private bool $previousAsync = false;

    /** @param float $seconds 0: no limit */
    public function __construct(public readonly float $seconds) {}

    /** @param \Closure(): void $onTimeout */
    public function arm(\Closure $onTimeout): void
    {
        if ($this->seconds <= 0) {
            return;
        }
        $this->handler ??= function (): void {
            $onTimeout = $this->onTimeout;
            if ($onTimeout !== null) {
                $this->onTimeout = null;
                $onTimeout();
            }
        };
        if (pcntl_signal_get_handler(SIGALRM) !== $this->handler) {
            pcntl_signal(SIGALRM, $this->handler, false); // first use, or a script installed its own
        }
        $this->onTimeout = $onTimeout;
        $this->previousAsync = pcntl_async_signals(true);
        pcntl_alarm((int) max(1, ceil($this->seconds)));
    }

    public function disarm(): void
    {
        if ($this->onTimeout === null) {
            return;
        }
        $this->onTimeout = null; // the alarm may still fire: into a handler with nothing to do
        pcntl_async_signals($this->previousAsync);
    }

    /**
     * After a timeout, while the process ends: if what still runs (shutdown functions, destructors) takes
     * more than $seconds, SIGALRM's default action ends the process.
     */
    public static function killAfter(int $seconds): void
    {
        pcntl_signal(SIGALRM, SIG_DFL);
        pcntl_alarm(max(1, $seconds));
    }
}
