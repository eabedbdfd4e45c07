<?php

declare(strict_types=1);

namespace Kiln\Server;

/** Hears what happens to the members of a sidecar set (see SidecarHost for when and how). */
interface SidecarListener
{
    /** Member $index (a fresh process) accepts connections on the unix socket $socket. */
    public function sidecarUp(int $index, int $pid, string $socket): void;

    /**
     * Member $index is gone; $retryIn seconds until its replacement is started (0: starting now; more:
     * it failed early, and the supervisor backs off).
     */
    public function sidecarDown(int $index, float $retryIn, string $reason): void;
}
