<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * Points this process's standard error (fd 2) at a file, in append mode: where PHP writes its own messages (a
 * script's warnings, a handler's fatal error) when no error_log is set. PHP has no dup2(), so this goes through
 * FFI; without FFI it does nothing and says so (false).
 */
final class StandardError
{
    private const O_WRONLY = 0x1;
    private const O_CREAT = 0x40;
    private const O_APPEND = 0x400;

    private static \FFI|false|null $libc = null;

    public static function appendTo(string $path): bool
    {
        if (self::$libc === null) {
            try {
                self::$libc = \extension_loaded('ffi') && \PHP_OS_FAMILY === 'Linux'
                    ? \FFI::cdef('int open(const char *path, int flags, ...); int dup2(int fd, int fd2); int close(int fd);', 'libc.so.6')
                    : false;
            } catch (\Throwable) {
                self::$libc = false;
            }
        }
        $libc = self::$libc;
        if (!$libc instanceof \FFI) {
            return false;
        }
        /** @var int $fd */
        $fd = $libc->open($path, self::O_WRONLY | self::O_CREAT | self::O_APPEND, 0o640); // @phpstan-ignore method.notFound (FFI)
        if ($fd < 0) {
            return false;
        }
        $moved = $fd === 2 || $libc->dup2($fd, 2) === 2; // @phpstan-ignore method.notFound (FFI)
        if ($fd !== 2) {
            $libc->close($fd); // @phpstan-ignore method.notFound (FFI)
        }

        return $moved;
    }
}
