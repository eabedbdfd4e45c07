<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The worker's end of the sidecar conversation: sends `sidecar-open` / `sidecar-replace` on the worker's
 * channel and hands `sidecar-up` / `sidecar-down` to the listeners. Asks made while the worker boots
 * (an app building its runners) are queued and sent once the service started, so building an app does
 * no I/O. The one per worker process is current(), as Loop::get() is the one loop.
 */
final class SidecarClient implements SidecarHost
{
    private static ?self $current = null;

    /** @var array<string, SidecarListener> by set name */
    private array $listeners = [];

    /** @var array<string, array<int, int>> set name => member index => pid of the member now up */
    private array $pids = [];

    /** @var array<string, true> the sets this worker shares with the server's other workers (one php-cgi parent for all) */
    private array $shared = [];

    /**
     * set name => member index => [lock file, its handle]: a shared lock held on each shared member while this worker
     * knows it, so that the last worker to leave without a supervisor is the one that ends it (terminateAll()).
     *
     * @var array<string, array<int, array{string, resource}>>
     */
    private array $locks = [];

    /** @var list<Message>|null lines waiting for start(); null once started */
    private ?array $queue = [];

    /** @param \Closure(Message): void $send writes one line to the supervisor */
    public function __construct(private readonly \Closure $send) {}

    /** The worker's sidecar host. Outside a `kiln serve` worker there is none. */
    public static function current(): SidecarHost
    {
        return self::$current ?? throw new \Error('Sidecar processes (the php-cgi pool of the isolated tier) are run by the '
            . 'kiln supervisor: serve the app with `kiln serve`, or pass a SidecarHost');
    }

    /** @internal the worker makes itself the current one after fork */
    public function makeCurrent(): void
    {
        self::$current = $this;
    }

    /** @internal the worker's service started: send what was asked meanwhile */
    public function start(): void
    {
        $queue = $this->queue ?? [];
        $this->queue = null;
        foreach ($queue as $message) {
            ($this->send)($message);
        }
    }

    public function open(SidecarSpec $spec, SidecarListener $listener): void
    {
        if (isset($this->listeners[$spec->name])) {
            throw new \Error("A sidecar set named '{$spec->name}' is already open in this worker");
        }
        $this->listeners[$spec->name] = $listener;
        if ($spec->shared) {
            $this->shared[$spec->name] = true;
        }
        $this->post(new Message(Message::SIDECAR_OPEN, $spec->toJson()));
    }

    public function replace(string $name, int $index, int $pid, bool $kill, string $reason): void
    {
        unset($this->pids[$name][$index]);
        $this->release($name, $index);
        $this->post(new Message(Message::SIDECAR_REPLACE, "$name $index $pid " . ($kill ? '1' : '0') . " $reason"));
    }

    /** @internal a line from the supervisor */
    public function receive(Message $message): void
    {
        if ($message->type === Message::SIDECAR_UP) {
            [$name, $index, $pid, $socket] = explode(' ', $message->argument . '   ', 4);
            $socket = rtrim($socket, ' ');
            if (isset($this->listeners[$name]) && $socket !== '') {
                $this->pids[$name][(int) $index] = (int) $pid;
                if (isset($this->shared[$name])) {
                    $this->hold($name, (int) $index, $socket . '.lock');
                }
                $this->listeners[$name]->sidecarUp((int) $index, (int) $pid, $socket);
            }
        } elseif ($message->type === Message::SIDECAR_DOWN) {
            [$name, $index, $retryIn, $reason] = explode(' ', $message->argument . '   ', 4);
            unset($this->pids[$name][(int) $index]);
            $this->release($name, (int) $index);
            ($this->listeners[$name] ?? null)?->sidecarDown((int) $index, (float) $retryIn, trim($reason));
        }
    }

    /**
     * @internal the supervisor is gone (killed): nobody else will end this worker's sidecars, so the
     * worker does, by pid, on its way out. A shared one (the php-cgi parent) is ended only by the last worker
     * that leaves: the others may still be answering requests through it.
     */
    public function terminateAll(): void
    {
        foreach ($this->pids as $name => $members) {
            foreach ($members as $index => $pid) {
                if (isset($this->shared[$name]) && !$this->lastToLeave($name, $index)) {
                    continue;
                }
                @posix_kill(-$pid, SIGTERM); // its process group: what it forked (php-cgi's children) too
                @posix_kill($pid, SIGTERM);
            }
        }
        $this->pids = [];
    }

    /** Takes a shared lock on the member's lock file (made beside its socket): this worker uses it. */
    private function hold(string $name, int $index, string $path): void
    {
        $this->release($name, $index);
        $handle = @fopen($path, 'ce');
        if ($handle !== false && flock($handle, LOCK_SH | LOCK_NB)) {
            $this->locks[$name][$index] = [$path, $handle];
        } elseif ($handle !== false) {
            fclose($handle);
        }
    }

    private function release(string $name, int $index): void
    {
        if (isset($this->locks[$name][$index])) {
            fclose($this->locks[$name][$index][1]);
            unset($this->locks[$name][$index]);
        }
    }

    /**
     * Whether no other worker holds the member any more: this worker lets its lock go, then asks for the lock
     * alone. Two leaving at once may both get it (the member is asked to end twice); one of them always does.
     * Without a lock (the file could not be made) this worker ends the member, as it would alone.
     */
    private function lastToLeave(string $name, int $index): bool
    {
        if (!isset($this->locks[$name][$index])) {
            return true;
        }
        $path = $this->locks[$name][$index][0];
        $this->release($name, $index);
        $handle = @fopen($path, 'ce');
        if ($handle === false) {
            return true;
        }
        $alone = flock($handle, LOCK_EX | LOCK_NB);
        fclose($handle);
        return $alone;
    }

    private function post(Message $message): void
    {
        if ($this->queue !== null) {
            $this->queue[] = $message;
            return;
        }
        ($this->send)($message);
    }
}
