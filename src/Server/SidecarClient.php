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
        $this->post(new Message(Message::SIDECAR_OPEN, $spec->toJson()));
    }

    public function replace(string $name, int $index, int $pid, bool $kill, string $reason): void
    {
        unset($this->pids[$name][$index]);
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
                $this->listeners[$name]->sidecarUp((int) $index, (int) $pid, $socket);
            }
        } elseif ($message->type === Message::SIDECAR_DOWN) {
            [$name, $index, $retryIn, $reason] = explode(' ', $message->argument . '   ', 4);
            unset($this->pids[$name][(int) $index]);
            ($this->listeners[$name] ?? null)?->sidecarDown((int) $index, (float) $retryIn, trim($reason));
        }
    }

    /**
     * @internal the supervisor is gone (killed): nobody else will end this worker's sidecars, so the
     * worker does, by pid, on its way out.
     */
    public function terminateAll(): void
    {
        foreach ($this->pids as $members) {
            foreach ($members as $pid) {
                @posix_kill(-$pid, SIGTERM); // its process group: what it forked (php-cgi's children) too
                @posix_kill($pid, SIGTERM);
            }
        }
        $this->pids = [];
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
