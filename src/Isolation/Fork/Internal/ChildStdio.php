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

    /** @param resource $stream */
    private static function fdOf(mixed $stream): int
    {
        $stat = \fstat($stream);
        $target = 'socket:[' . ($stat === false ? -1 : $stat['ino']) . ']';
        foreach (\scandir('/proc/self/fd') ?: [] as $entry) {
            if ($entry !== '.' && $entry !== '..' && @\readlink("/proc/self/fd/$entry") === $target) {
                return (int) $entry;
            }
        }
        \fwrite(\STDERR, "fork server: cannot find the connection's fd in /proc/self/fd\n");
        exit(70);
    }
}
