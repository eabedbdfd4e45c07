<?php

declare(strict_types=1);

namespace Kiln\Server;

/** The supervisor's record of one sidecar process (one member of a set, one incarnation). */
final class SidecarProcess
{
    public SidecarState $state = SidecarState::Starting;

    public ?float $upAt = null;

    /** When a Stopping process gets SIGKILL if it has not exited. */
    public float $killAt = INF;

    /** Start a fresh member in its place once it is reaped (a replacement the worker asked for). */
    public bool $replace = false;

    /** @var resource|null the connection of the probe awaiting an answer (SidecarSpec::$probe) */
    public mixed $probe = null;

    /** When the next probe is sent. */
    public float $probeAt = INF;

    /** Since when it has answered no probe (null: it answered the last one). */
    public ?float $silentSince = null;

    /** Why the supervisor ended it, when that makes its exit a failure (it never listened, say). */
    public ?string $failure = null;

    public function __construct(
        public readonly SidecarSet $set,
        public readonly int $index,
        public readonly int $pid,
        public readonly string $socket,
        public readonly float $startedAt,
    ) {}

    public function become(SidecarState $next): void
    {
        $this->state = $this->state->to($next);
    }

    public function label(): string
    {
        $of = $this->set->owner === 0 ? 'of the server' : "of worker pid {$this->set->owner}";
        return "sidecar {$this->set->spec->name}#{$this->index} (pid {$this->pid}) $of";
    }
}
