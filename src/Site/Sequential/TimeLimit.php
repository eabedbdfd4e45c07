<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

/**
 * A wall-clock limit for a script running in the worker, which the CLI does not have (max_execution_time
 * counts CPU time, and is 0 there). arm() turns asynchronous signals on, so SIGALRM's handler runs at the
 * next instruction of the script; the handler is installed without SA_RESTART, so sleep(), a blocking read or
 * a database wait returns early instead of finishing first. disarm() leaves async signals as arm() found them:
 * on in a worker with --stall-timeout (its stall report needs them, docs/design/028), off otherwise (the event
 * loop dispatches signals itself, synchronously). The event loop never uses SIGALRM.
 *
 * At most one system call a second: the alarm (alarm(), whole seconds) is started for the limit rounded up
 * plus one second, and a script that starts within that second of it keeps it, since the alarm then fires
 * after its own limit is up, never before (a signal before would cut short the script's sleep() or
 * database wait). So a script is stopped between its limit and a second after it. An alarm that fires
 * between scripts does nothing; the next arm() starts a new one.
 *
 * The callback must not return into the script: it answers the request and ends the process (a script
 * stopped at an arbitrary instruction leaves state no reset can trust). A script blocked inside an
 * extension call that retries on EINTR is stopped only when that call returns. A script that cancels the
 * alarm itself (pcntl_alarm(0)) runs without a limit, as do the scripts after it for up to one limit's time.
 *
 * @api reused by the fork tier
 */
final class TimeLimit
{
    /** @var (\Closure(): void)|null what to do on timeout while armed */
    private ?\Closure $onTimeout = null;

    private ?\Closure $handler = null;

    private bool $previousAsync = false;

    /** When the pending alarm fires (hrtime, ns); 0: none pending. */
    private int $alarmAt = 0;

    /** When the armed script started (hrtime, ns). */
    private int $started = 0;

    /** The limit rounded up to whole seconds, as alarm() takes it, and in nanoseconds. */
    private readonly int $whole;

    private readonly int $nanoseconds;

    /** @param float $seconds 0: no limit */
    public function __construct(public readonly float $seconds)
    {
        $this->whole = (int) ceil($seconds);
        $this->nanoseconds = (int) ($seconds * 1e9);
    }

    /** @param \Closure(): void $onTimeout */
    public function arm(\Closure $onTimeout): void
    {
        if ($this->seconds <= 0) {
            return;
        }
        $this->handler ??= $this->expired(...);
        if (pcntl_signal_get_handler(SIGALRM) !== $this->handler) {
            pcntl_signal(SIGALRM, $this->handler, false); // first use, or a script installed its own
        }
        $this->onTimeout = $onTimeout;
        $this->previousAsync = pcntl_async_signals(true);
        $this->started = $now = hrtime(true);
        if ($now + $this->whole * 1_000_000_000 > $this->alarmAt) { // the pending alarm (if any) would fire before this script's limit is up
            $this->alarm($this->whole + 1, $now);
        }
    }

    public function disarm(): void
    {
        if ($this->onTimeout === null) {
            return;
        }
        $this->onTimeout = null; // the alarm stays pending: it fires into a handler with nothing to do
        pcntl_async_signals($this->previousAsync);
    }

    /** The SIGALRM handler: the armed script's time is up (or a signal queued earlier is dispatched late). */
    private function expired(): void
    {
        $this->alarmAt = 0;
        $onTimeout = $this->onTimeout;
        if ($onTimeout === null) {
            return; // between scripts
        }
        $now = hrtime(true);
        $left = $this->started + $this->nanoseconds - $now;
        if ($left > 1_000_000) { // not this script's alarm
            $this->alarm((int) ceil($left / 1e9), $now);
            return;
        }
        $this->onTimeout = null;
        $onTimeout();
    }

    private function alarm(int $seconds, int $now): void
    {
        $seconds = max(1, $seconds);
        pcntl_alarm($seconds);
        $this->alarmAt = $now + $seconds * 1_000_000_000;
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
