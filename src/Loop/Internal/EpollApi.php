<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

/**
 * The libc functions EpollDriver calls through FFI, spelled out for static analysis only:
 * nothing implements this interface, the FFI object is annotated with it.
 *
 * @internal
 */
interface EpollApi
{
    public function epoll_create1(int $flags): int;

    public function epoll_ctl(int $epfd, int $op, int $fd, \FFI\CData $event): int;

    public function epoll_wait(int $epfd, \FFI\CData $events, int $maxEvents, int $timeoutMs): int;

    public function close(int $fd): int;

    /** @return array<int, int> */
    public function __errno_location(): array;

    public function new(string $type): \FFI\CData;

    /**
     * Used only to see a buffer as an array of 32-bit words (uint32_t *), read by index.
     *
     * @return array<int, int>
     */
    public function cast(string $type, \FFI\CData $value): mixed;
}
