<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

/**
 * The libc function StreamPoll calls through FFI, spelled out for static analysis only: nothing implements this
 * interface, the FFI object is annotated with it. The descriptor set is `int32_t[2 * n]`: each struct pollfd is its
 * fd, then its events and revents as the two 16-bit halves of one word.
 *
 * @internal
 */
interface PollApi
{
    public function poll(\FFI\CData $fds, int $count, int $timeoutMs): int;

    /** @return array<int, int> an int32_t array, read and written by index */
    public function new(string $type): mixed;
}
