<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

/**
 * Signal watchers of one driver. The pcntl handler only queues the signal number; watchers are
 * called from dispatch() on the loop's stack, once per tick, so a callback is never interrupted half-way
 * by another. With pcntl_async_signals() on (a Kiln worker turns it on for --stall-timeout), the queueing
 * handler runs between any two instructions, which it is safe to do; the watchers still wait for dispatch().
 * The previous handler of a signal is restored when its last enabled watcher goes away. A signal reserve()d
 * for a handler installed without the loop (a worker's stall report) cannot be watched: the two handlers
 * would replace each other.
 *
 * @internal
 */
final class SignalHub
{
    /** @var array<int, array<string, Watcher>> */
    private array $watchers = [];
    /** @var array<int, callable|int> */
    private array $previous = [];
    /** @var list<int> */
    private array $queue = [];
    /** @var array<int, string> signal => why it cannot be watched (dispositions are per process: shared by every hub) */
    private static array $reserved = [];

    /** @param string|null $why the message of the \Error onSignal() throws for it; null: watchable again */
    public static function reserve(int $signo, ?string $why): void
    {
        if ($why === null) {
            unset(self::$reserved[$signo]);
        } else {
            self::$reserved[$signo] = $why;
        }
    }

    public function active(): bool
    {
        return $this->watchers !== [];
    }

    public function add(Watcher $watcher): void
    {
        $signo = $watcher->key;
        if (isset(self::$reserved[$signo])) {
            throw new \Error(self::$reserved[$signo]);
        }
        if (!isset($this->watchers[$signo])) {
            $this->previous[$signo] = \pcntl_signal_get_handler($signo);
            if (!\pcntl_signal($signo, $this->enqueue(...))) {
                throw new \ValueError("Cannot watch signal $signo");
            }
        }
        $this->watchers[$signo][$watcher->id] = $watcher;
    }

    public function remove(Watcher $watcher): void
    {
        $signo = $watcher->key;
        unset($this->watchers[$signo][$watcher->id]);
        if (isset($this->watchers[$signo]) && $this->watchers[$signo] === []) {
            unset($this->watchers[$signo]);
            \pcntl_signal($signo, $this->previous[$signo] ?? \SIG_DFL);
            unset($this->previous[$signo]);
        }
    }

    /** Calls the watchers of the signals received since the last call; a no-op without watchers. */
    public function dispatch(): void
    {
        if ($this->watchers === []) {
            return;
        }
        \pcntl_signal_dispatch();
        while ($this->queue !== []) {
            $signo = \array_shift($this->queue);
            foreach ($this->watchers[$signo] ?? [] as $watcher) {
                if ($watcher->enabled) {
                    ($watcher->callback)($watcher->id, $signo);
                }
            }
        }
    }

    private function enqueue(int $signo): void
    {
        $this->queue[] = $signo;
    }
}
