<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork\Internal;

/**
 * @internal In a fork server's child: makes fd 1 the client connection (PHP's CLI SAPI writes its output
 * to fd 1) and fd 0 /dev/null. PHP has no dup2(): closing STDIN/STDOUT frees fds 0 and 1, and dup()
 * (php://fd/N) takes the lowest free one.
 */
final class ChildStdio
{
    private const F_SETFD = 2;
    private const FD_CLOEXEC = 1;

    /** What /proc/self/fd/N links to for the connection's socket, once redirect() found it. */
    private static string $connection = '';

    /** fcntl() through FFI; false when FFI cannot load it, null until prepare(). */
    private static \FFI|false|null $libc = null;

    /** @param resource $socket */
    public static function redirect(mixed $socket): void
    {
        $fd = self::fdOf($socket);
        \fclose(\STDIN);
        $null = \fopen('/dev/null', 'rb');
        \fclose(\STDOUT);
        $out = \fopen("php://fd/$fd", 'wb');
        if ($null === false || $out === false || @\readlink('/proc/self/fd/1') !== @\readlink("/proc/self/fd/$fd")) {
            \fwrite(\STDERR, "fork server: cannot make fd 1 the connection in the child\n");
            exit(70);
        }
        static $keep; // open for the life of the child
        $keep = [$null, $out, $socket];
    }

    /**
     * In the fork server, before it forks: loads fcntl() through FFI once, for closeOnExec() in the children.
     * Without FFI, closeOnExec() does nothing.
     */
    public static function prepare(): void
    {
        if (self::$libc === null && \extension_loaded('ffi')) {
            try {
                self::$libc = \FFI::cdef('int fcntl(int fd, int cmd, ...);');
            } catch (\Throwable) {
                self::$libc = false;
            }
        }
    }

    /**
     * Marks every fd open on the connection close-on-exec: fd 1, the accepted socket, and the copies PHP made of
     * them (php://fd/1). A program the script starts must not inherit them: one left running in the background
     * (`exec('cmd > /dev/null &')`) would hold the connection open, and the response would not end until it exits.
     * Programs get their output through the pipes PHP gives them (exec(), proc_open()); one started without a pipe
     * for its standard output finds it closed, where it would have written into the response.
     */
    public static function closeOnExec(): void
    {
        $libc = self::$libc;
        if (!$libc instanceof \FFI || self::$connection === '') {
            return;
        }
        foreach (\scandir('/proc/self/fd') ?: [] as $entry) {
            if ($entry !== '.' && $entry !== '..' && @\readlink("/proc/self/fd/$entry") === self::$connection) {
                $libc->fcntl((int) $entry, self::F_SETFD, self::FD_CLOEXEC); // @phpstan-ignore method.notFound (FFI)
            }
        }
    }

    /** @param resource $stream */
    private static function fdOf(mixed $stream): int
    {
        $stat = \fstat($stream);
        $target = self::$connection = 'socket:[' . ($stat === false ? -1 : $stat['ino']) . ']';
        foreach (\scandir('/proc/self/fd') ?: [] as $entry) {
            if ($entry !== '.' && $entry !== '..' && @\readlink("/proc/self/fd/$entry") === $target) {
                return (int) $entry;
            }
        }
        \fwrite(\STDERR, "fork server: cannot find the connection's fd in /proc/self/fd\n");
        exit(70);
    }
}
