<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

use Kiln\Loop\Driver;

/**
 * Everything a driver does except polling for I/O: ids, timers, defers, signals, references and the
 * run loop. A subclass keeps its own poll set in sync through ioChanged() and implements poll().
 *
 * One tick: expired timers, then deferred callbacks (drained, including ones deferred meanwhile),
 * then pending signals, then one poll for I/O (timeout 0 if anything is deferred), then signals again.
 * Signals that arrived while PHP code ran thus reach their watchers before the next poll's I/O
 * callbacks (a worker told to drain does not first serve the request that arrived just after).
 *
 * @internal
 */
abstract class AbstractDriver implements Driver
{
    /** Longest poll while signal watchers exist, so signals are dispatched promptly (ns). */
    protected const SIGNAL_POLL_NS = 250_000_000;

    /** @var array<int, array<string, Watcher>> enabled readable watchers by (int) $stream */
    protected array $readers = [];
    /** @var array<int, array<string, Watcher>> enabled writable watchers by (int) $stream */
    protected array $writers = [];

    /** @var array<string, Watcher> */
    private array $watchers = [];
    /** @var array<string|int, Watcher|\Closure> deferred watchers by id, and queued callbacks (queue()) by number, in order */
    private array $deferQueue = [];
    private readonly TimerQueue $timers;
    private readonly SignalHub $signals;
    private int $nextId = 0;
    /** Number of enabled, referenced watchers: run() returns when it drops to 0. */
    private int $refCount = 0;
    private bool $running = false;
    private int $nowNs;

    public function __construct()
    {
        $this->timers = new TimerQueue();
        $this->signals = new SignalHub();
        $this->nowNs = \hrtime(true);
    }

    /** Poll for I/O for at most $timeoutNs (-1: no limit) and call the ready watchers. */
    abstract protected function poll(int $timeoutNs): void;

    /** The set of enabled watchers of one kind on a stream went from empty to non-empty or back. */
    abstract protected function ioChanged(int $key, mixed $stream, bool $read): void;

    /**
     * An I/O watcher of the stream with this key was cancelled (its stream may be closed next): a driver that
     * defers changes of interest sends a pending removal now, while the fd still refers to that stream.
     */
    protected function ioCancelled(int $key): void {}

    public function onReadable(mixed $stream, \Closure $callback): string
    {
        return $this->add(Watcher::io('w' . $this->nextId++, WatcherType::Readable, $callback, $stream));
    }

    public function onReadableUnbuffered(mixed $stream, \Closure $callback): string
    {
        $watcher = Watcher::io('w' . $this->nextId++, WatcherType::Readable, $callback, $stream);
        \assert(\is_resource($stream));
        \stream_set_read_buffer($stream, 0);
        $watcher->unbuffered = true;

        return $this->add($watcher);
    }

    public function onWritable(mixed $stream, \Closure $callback): string
    {
        return $this->add(Watcher::io('w' . $this->nextId++, WatcherType::Writable, $callback, $stream));
    }

    public function delay(float $seconds, \Closure $callback): string
    {
        return $this->add(Watcher::timer('w' . $this->nextId++, WatcherType::Delay, $callback, $seconds));
    }

    public function repeat(float $interval, \Closure $callback): string
    {
        return $this->add(Watcher::timer('w' . $this->nextId++, WatcherType::Repeat, $callback, $interval));
    }

    public function defer(\Closure $callback): string
    {
        return $this->add(new Watcher('w' . $this->nextId++, WatcherType::Defer, $callback));
    }

    public function queue(\Closure $callback): void
    {
        $this->deferQueue[] = $callback;
        $this->refCount++;
    }

    public function onSignal(int $signal, \Closure $callback): string
    {
        if (!\extension_loaded('pcntl')) {
            throw new \Error('onSignal() needs ext-pcntl');
        }

        return $this->add(new Watcher('w' . $this->nextId++, WatcherType::Signal, $callback, null, $signal));
    }

    public function disable(string $id): void
    {
        $watcher = $this->watchers[$id] ?? null;
        if ($watcher !== null && $watcher->enabled) {
            $this->deactivate($watcher);
        }
    }

    public function enable(string $id): void
    {
        $watcher = $this->watchers[$id] ?? null;
        if ($watcher !== null && !$watcher->enabled) {
            $this->activate($watcher);
        }
    }

    public function cancel(string $id): void
    {
        $watcher = $this->watchers[$id] ?? null;
        if ($watcher === null) {
            return;
        }
        if ($watcher->enabled) {
            $this->deactivate($watcher);
        }
        unset($this->watchers[$id]);
        if ($watcher->stream !== null) {
            $this->ioCancelled($watcher->key);
        }
    }

    public function unreference(string $id): void
    {
        $watcher = $this->watchers[$id] ?? null;
        if ($watcher !== null && $watcher->referenced) {
            $watcher->referenced = false;
            $this->refCount -= (int) $watcher->enabled;
        }
    }

    public function reference(string $id): void
    {
        $watcher = $this->watchers[$id] ?? null;
        if ($watcher !== null && !$watcher->referenced) {
            $watcher->referenced = true;
            $this->refCount += (int) $watcher->enabled;
        }
    }

    public function run(): void
    {
        if ($this->running) {
            throw new \Error('The loop is already running: run() is not re-entrant (use Loop::async() and suspend instead)');
        }
        $this->running = true;
        try {
            while ($this->running && $this->refCount > 0) {
                $this->tick();
            }
        } finally {
            $this->running = false;
        }
    }

    public function stop(): void
    {
        $this->running = false;
    }

    public function isRunning(): bool
    {
        return $this->running;
    }

    public function now(): float
    {
        return ($this->running ? $this->nowNs : \hrtime(true)) / 1e9;
    }

    /** Watchers whose stream was closed while watched: cancel them, then call them once so their owner notices. */
    protected function reapClosedStreams(): void
    {
        foreach ([...\array_merge(...\array_values($this->readers)), ...\array_merge(...\array_values($this->writers))] as $watcher) {
            if (!\is_resource($watcher->stream) && isset($this->watchers[$watcher->id])) {
                $this->cancel($watcher->id);
                ($watcher->callback)($watcher->id, $watcher->stream);
            }
        }
    }

    private function tick(): void
    {
        $this->nowNs = \hrtime(true);
        $due = $this->timers->peek();
        if ($due !== null && $due <= $this->nowNs) {
            $this->runTimers();
        }
        if ($this->deferQueue !== []) {
            $this->runDefers();
        }
        $this->signals->dispatch();
        if ($this->deferQueue !== [] || !$this->running || $this->refCount <= 0) {
            $timeout = 0;
        } else {
            $next = $this->timers->peek();
            $timeout = $next === null ? -1 : \max(0, $next - (int) \hrtime(true));
            if ($this->signals->active() && ($timeout < 0 || $timeout > self::SIGNAL_POLL_NS)) {
                $timeout = self::SIGNAL_POLL_NS;
            }
        }
        $this->poll($timeout);
        $this->nowNs = \hrtime(true);
        $this->signals->dispatch();
    }

    private function runTimers(): void
    {
        while (($watcher = $this->timers->extractDue($this->nowNs)) !== null) {
            if ($watcher->type === WatcherType::Delay) {
                $this->cancel($watcher->id);
            } else {
                $watcher->expiration = \max(\hrtime(true) + $watcher->interval, $this->nowNs + 1);
                $this->timers->insert($watcher);
            }
            ($watcher->callback)($watcher->id);
        }
    }

    private function runDefers(): void
    {
        while ($this->deferQueue !== []) {
            foreach ($this->deferQueue as $id => $watcher) {
                if ($watcher instanceof \Closure) { // queue(): no watcher to cancel
                    unset($this->deferQueue[$id]);
                    $this->refCount--;
                    $watcher();
                    continue;
                }
                if (!isset($this->deferQueue[$id])) {
                    continue; // cancelled by an earlier callback of this batch
                }
                $this->cancel((string) $id); // also removes it from the queue, so a throw leaves the rest queued
                ($watcher->callback)($id);
            }
        }
    }

    private function add(Watcher $watcher): string
    {
        $this->watchers[$watcher->id] = $watcher;
        try {
            $this->activate($watcher);
        } catch (\Throwable $e) {
            $this->cancel($watcher->id); // a stream the driver refuses leaves no watcher behind to keep the loop running
            throw $e;
        }

        return $watcher->id;
    }

    private function activate(Watcher $watcher): void
    {
        $watcher->enabled = true;
        $this->refCount += (int) $watcher->referenced;
        switch ($watcher->type) {
            case WatcherType::Readable:
                $new = !isset($this->readers[$watcher->key]);
                $this->readers[$watcher->key][$watcher->id] = $watcher;
                if ($new) {
                    $this->ioChanged($watcher->key, $watcher->stream, true);
                }
                break;
            case WatcherType::Writable:
                $new = !isset($this->writers[$watcher->key]);
                $this->writers[$watcher->key][$watcher->id] = $watcher;
                if ($new) {
                    $this->ioChanged($watcher->key, $watcher->stream, false);
                }
                break;
            case WatcherType::Delay:
            case WatcherType::Repeat:
                $watcher->expiration = \hrtime(true) + $watcher->interval;
                $this->timers->insert($watcher);
                break;
            case WatcherType::Defer:
                $this->deferQueue[$watcher->id] = $watcher;
                break;
            case WatcherType::Signal:
                $this->signals->add($watcher);
                break;
        }
    }

    private function deactivate(Watcher $watcher): void
    {
        $watcher->enabled = false;
        $this->refCount -= (int) $watcher->referenced;
        switch ($watcher->type) {
            case WatcherType::Readable:
                unset($this->readers[$watcher->key][$watcher->id]);
                if ($this->readers[$watcher->key] === []) {
                    unset($this->readers[$watcher->key]);
                    $this->ioChanged($watcher->key, $watcher->stream, true);
                }
                break;
            case WatcherType::Writable:
                unset($this->writers[$watcher->key][$watcher->id]);
                if ($this->writers[$watcher->key] === []) {
                    unset($this->writers[$watcher->key]);
                    $this->ioChanged($watcher->key, $watcher->stream, false);
                }
                break;
            case WatcherType::Delay:
            case WatcherType::Repeat:
                $this->timers->remove($watcher);
                break;
            case WatcherType::Defer:
                unset($this->deferQueue[$watcher->id]);
                break;
            case WatcherType::Signal:
                $this->signals->remove($watcher);
                break;
        }
    }
}
