<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * A worker's way to the processes the supervisor runs for it (see Sidecars). The worker's own
 * implementation is SidecarClient::current(); tests may pass another.
 *
 * Contract:
 * - open() asks for a set once; the listener then hears sidecarUp() for each member that listens (again
 *   for each replacement) and sidecarDown() for each that died or could not start. Calls arrive from the
 *   event loop, never from inside open() or replace(); listeners MUST NOT suspend in them.
 * - A member index is stable: a replacement keeps its index and gets a new pid and socket path.
 * - replace() is for a member the caller no longer sends work to: process $pid is stopped (SIGTERM, or
 *   SIGKILL with $kill) and a fresh one started; sidecarUp() announces it. An ask for a process that is no
 *   longer the member's (it died and was replaced meanwhile) is ignored, as are unknown names or indexes.
 * - Every process of a set ends when its worker exits, however the worker exits.
 */
interface SidecarHost
{
    public function open(SidecarSpec $spec, SidecarListener $listener): void;

    public function replace(string $name, int $index, int $pid, bool $kill, string $reason): void;
}
