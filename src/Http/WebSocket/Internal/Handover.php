<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket\Internal;

use Kiln\Loop\Loop;

/**
 * The 101's promise to hand the socket to its Session. The HTTP core calls take() once the 101 is written.
 * When it never will (the client's connection ended while onOpen() ran, a middleware answered with another
 * response), the response is dropped without it, and this with it: the Session then ends at once as a
 * connection dropped (onClose() told 1006, its rooms left) instead of holding its place until the pending
 * timeout.
 *
 * @internal
 */
final class Handover
{
    private bool $taken = false;

    public function __construct(private readonly Session $session) {}

    /** @param resource $socket */
    public function take(mixed $socket, string $rest): void
    {
        $this->taken = true;
        $this->session->attach($socket, $rest);
    }

    public function __destruct()
    {
        if (!$this->taken) {
            // From the loop: no Fiber may start or switch inside a destructor, and ending the session may start one.
            Loop::defer($this->session->lost(...));
        }
    }
}
