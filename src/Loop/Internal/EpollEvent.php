<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

/**
 * The shape of an FFI `struct epoll_event`, for static analysis only: never instantiated (see EpollApi).
 *
 * @internal
 */
abstract class EpollEvent
{
    public int $events;
    /** epoll_data_t, used as its u64 member: the resource id of the stream */
    public int $data;
}
