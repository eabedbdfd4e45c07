<?php

declare(strict_types=1);

namespace Kiln\Db\Postgres\Internal;

use Kiln\Db\ConnectionException;

/**
 * A watchable copy of libpq's socket. pg_socket() gives a stream that select() can use but that has no
 * fstat(), so the epoll driver cannot find its descriptor. libpq creates the socket inside pg_connect()
 * and pg_connect_poll(), which return without any other Fiber running, so the socket descriptors that
 * appear in /proc/self/fd across such a call are libpq's. The copy is a dup() (php://fd/N): watching it is
 * watching the same socket, and closing it leaves libpq's descriptor alone.
 *
 * @internal
 */
final class SocketFinder
{
    private function __construct() {}

    /** @return array<int, string> fd => "socket:[inode]" of every socket this process holds */
    public static function sockets(): array
    {
        $sockets = [];
        foreach (scandir('/proc/self/fd') ?: [] as $entry) {
            if ($entry !== '.' && $entry !== '..') {
                $target = @readlink("/proc/self/fd/$entry");
                if (\is_string($target) && str_starts_with($target, 'socket:')) {
                    $sockets[(int) $entry] = $target;
                }
            }
        }

        return $sockets;
    }

    public static function target(int $fd): ?string
    {
        $target = @readlink("/proc/self/fd/$fd");

        return \is_string($target) ? $target : null;
    }

    /**
     * The one socket in $after that was not in $before.
     *
     * @param array<int, string> $before
     * @param array<int, string> $after
     */
    public static function newOne(array $before, array $after, string $describe): int
    {
        $new = array_diff_assoc($after, $before);
        if (\count($new) !== 1) {
            throw new ConnectionException("Cannot tell which socket is the connection to $describe (" . \count($new) . ' new sockets)');
        }

        return (int) array_key_first($new);
    }

    /** @return resource a dup() of $fd */
    public static function duplicate(int $fd, string $describe): mixed
    {
        $stream = @fopen("php://fd/$fd", 'r+');
        if ($stream === false) {
            throw new ConnectionException("Cannot watch the socket of the connection to $describe");
        }

        return $stream;
    }
}
