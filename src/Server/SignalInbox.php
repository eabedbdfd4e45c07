<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * Signal handlers that only record: each signal bumps a counter; the supervisor loop takes what
 * arrived and acts on it. Counters (not a queue) so a handler running mid-take() loses nothing.
 *
 * UNUSED are the signals whose default action would end the supervisor but that Kiln gives no meaning:
 * they are recorded too, so that the supervisor logs them and goes on (an nginx or php-fpm habit, USR2,
 * must not stop the server without a word).
 */
final class SignalInbox
{
    public const UNUSED = [SIGUSR2, SIGALRM];

    public const SIGNALS = [SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGCHLD, ...self::UNUSED];

    /** @var array<int, int> */
    private array $received = [];

    /** @var array<int, int> */
    private array $taken = [];

    public function install(): void
    {
        pcntl_async_signals(true);
        foreach (self::SIGNALS as $signal) {
            $this->received[$signal] = 0;
            $this->taken[$signal] = 0;
            pcntl_signal($signal, function (int $signal): void {
                $this->received[$signal]++;
            });
        }
        pcntl_signal(SIGPIPE, SIG_IGN);
    }

    public function uninstall(): void
    {
        foreach (self::SIGNALS as $signal) {
            pcntl_signal($signal, SIG_DFL);
        }
    }

    /** @return list<int> signals received since the last call, in a fixed order (once each) */
    public function take(): array
    {
        $signals = [];
        foreach ($this->received as $signal => $count) {
            if ($count > $this->taken[$signal]) {
                $this->taken[$signal] = $count;
                $signals[] = $signal;
            }
        }
        return $signals;
    }
}
