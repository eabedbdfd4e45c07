<?php

declare(strict_types=1);

namespace Kiln\Server\Internal;

/**
 * @internal
 *
 * Linux's prctl(2), through FFI where it is available (it is optional: every method then answers false and
 * changes nothing):
 *
 * - childSubreaper(): processes below this one whose parent dies are given to this one, not to PID 1, so the
 *   supervisor reaps them (a container's init often does not) and no zombie is left;
 * - parentDeathSignal(): this process gets a signal when its parent dies, even by `kill -9`.
 *
 * docs/design/029-process-hygiene.md says what each process of the server does when another one dies.
 */
final class ProcessControl
{
    private const PR_SET_PDEATHSIG = 1;
    private const PR_SET_CHILD_SUBREAPER = 36;

    /** null: not tried yet; false: no FFI, or no prctl (not Linux) */
    private static \FFI|false|null $libc = null;

    public static function available(): bool
    {
        return self::libc() !== false;
    }

    /** Makes this process the reaper of orphans below it (PR_SET_CHILD_SUBREAPER); false when it cannot. */
    public static function childSubreaper(): bool
    {
        return self::prctl(self::PR_SET_CHILD_SUBREAPER, 1);
    }

    /**
     * Asks for $signal when the parent dies (PR_SET_PDEATHSIG), in a child just forked from $parent. A parent that
     * died before the call is not caught by it: the signal is then raised at once. False when it cannot be asked.
     */
    public static function parentDeathSignal(int $signal, int $parent): bool
    {
        if (!self::prctl(self::PR_SET_PDEATHSIG, $signal)) {
            return false;
        }
        if (posix_getppid() !== $parent) {
            posix_kill(posix_getpid(), $signal);
        }
        return true;
    }

    private static function prctl(int $option, int $value): bool
    {
        $libc = self::libc();
        if ($libc === false) {
            return false;
        }
        try {
            return $libc->prctl($option, $value, 0, 0, 0) === 0; // @phpstan-ignore method.notFound (FFI)
        } catch (\Throwable) {
            return false;
        }
    }

    private static function libc(): \FFI|false
    {
        if (self::$libc === null) {
            self::$libc = false;
            if (PHP_OS_FAMILY === 'Linux' && \extension_loaded('ffi')) {
                try {
                    self::$libc = \FFI::cdef('int prctl(int option, unsigned long arg2, unsigned long arg3, unsigned long arg4, unsigned long arg5);');
                } catch (\Throwable) {
                    // ffi.enable=0, or FFI refused here: the server runs without these guarantees (see the design doc).
                }
            }
        }
        return self::$libc;
    }
}
