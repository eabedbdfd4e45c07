<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

/**
 * Wraps a command so that it starts with only fds 0, 1 and 2 open. PHP's proc_open() leaves every other
 * descriptor of the worker open in the child (PHP sockets are not close-on-exec): a CGI script or a fork
 * server would otherwise hold the worker's listening socket and its clients' connections, so a client
 * whose connection the worker closed would not see the end of it until the script exits.
 *
 * The wrapper is bash (it closes what /proc/self/fd lists, then execs the command in its own place, so
 * the pid stays the command's). Without bash the command runs unwrapped.
 */
final class CleanExec
{
    private const SCRIPT = 'for fd in /proc/$$/fd/*; do fd=${fd##*/}; case $fd in 0|1|2|255) ;; *) eval "exec $fd>&-" 2>/dev/null ;; esac; done; exec "$@"';

    private static string|false|null $bash = null;

    /**
     * @param list<string> $command
     *
     * @return list<string>
     */
    public static function wrap(array $command): array
    {
        self::$bash ??= self::find();

        return self::$bash === false ? $command : [self::$bash, '-c', self::SCRIPT, 'kiln-exec', ...$command];
    }

    private static function find(): string|false
    {
        foreach (['/usr/bin/bash', '/bin/bash'] as $path) {
            if (\is_executable($path)) {
                return $path;
            }
        }

        return false;
    }
}
