<?php

declare(strict_types=1);

namespace Kiln\Http\Sse\Internal;

/**
 * Where an open EventStream's bytes go: the connection (Http\Internal\PushedStream), or a test's buffer.
 * write() returns false once the sink is closed; end() finishes the response and calls the stream's
 * ended().
 *
 * @internal
 */
interface Sink
{
    public function write(string $bytes): bool;

    public function end(): void;
}
