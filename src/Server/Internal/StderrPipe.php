<?php

declare(strict_types=1);

namespace Kiln\Server\Internal;

/**
 * @internal
 *
 * A pipe that becomes a worker's standard error (fd 2), so the supervisor reads what PHP writes there and files
 * it in the error log as entries of its own (docs/deploy.md, "Logs"). PHP has neither pipe() nor dup2(): both go
 * through FFI, which is optional; without it open() answers null and workers keep the server's standard error.
 *
 * open() in the supervisor before the fork; in the child, becomeStderr(); in the parent, closeWriteEnd().
 */
final class StderrPipe
{
    private const O_CLOEXEC = 0x80000;

    /** null: not tried yet; false: no FFI, or no libc */
    private static \FFI|false|null $libc = null;

    /** @param resource $reader the read end, non-blocking, for the supervisor */
    private function __construct(
        public readonly mixed $reader,
        private int $writeFd,
        private int $readFd,
    ) {}

    /** Whether open() can make pipes: FFI is usable and has libc's pipe2() and dup2(). */
    public static function available(): bool
    {
        return self::libc() !== false;
    }

    /** A new pipe, or null without FFI (or when the process is out of file descriptors). */
    public static function open(): ?self
    {
        $libc = self::libc();
        if ($libc === false) {
            return null;
        }
        try {
            /** @var array{int, int} $fds */
            $fds = $libc->new('int[2]'); // @phpstan-ignore varTag.nativeType (an int[2] CData, read by index)
            // Close-on-exec: a program some worker runs later gets its own standard error, not this pipe's other end.
            if ($libc->pipe2($fds, self::O_CLOEXEC) !== 0) { // @phpstan-ignore method.notFound (FFI)
                return null;
            }
            [$read, $write] = [$fds[0], $fds[1]];
            $reader = @fopen("php://fd/$read", 'r'); // a dup of the read end, as a PHP stream
            if ($reader === false) {
                $libc->close($read); // @phpstan-ignore method.notFound (FFI)
                $libc->close($write); // @phpstan-ignore method.notFound (FFI)
                return null;
            }
            stream_set_blocking($reader, false);
            return new self($reader, $write, $read);
        } catch (\Throwable) {
            return null;
        }
    }

    /** In the worker just forked: its fd 2 is the pipe from now on; false if that failed (fd 2 unchanged). */
    public function becomeStderr(): bool
    {
        $libc = self::libc();
        \assert($libc !== false);
        @fclose($this->reader);
        $libc->close($this->readFd); // @phpstan-ignore method.notFound (FFI)
        $moved = $libc->dup2($this->writeFd, 2) === 2; // @phpstan-ignore method.notFound (FFI)
        $libc->close($this->writeFd); // @phpstan-ignore method.notFound (FFI)
        $this->writeFd = $this->readFd = -1;
        return $moved;
    }

    /** In the supervisor after the fork (or when it failed): only the worker holds the write end, so its exit is an EOF. */
    public function closeWriteEnd(): void
    {
        $libc = self::libc();
        if ($libc !== false && $this->writeFd >= 0) {
            $libc->close($this->writeFd); // @phpstan-ignore method.notFound (FFI)
            $libc->close($this->readFd); // @phpstan-ignore method.notFound (FFI; the reader stream holds a dup of it)
        }
        $this->writeFd = $this->readFd = -1;
    }

    private static function libc(): \FFI|false
    {
        if (self::$libc === null) {
            self::$libc = false;
            if (PHP_OS_FAMILY === 'Linux' && \extension_loaded('ffi')) {
                try {
                    self::$libc = \FFI::cdef('int pipe2(int pipefd[2], int flags); int dup2(int oldfd, int newfd); int close(int fd);');
                } catch (\Throwable) {
                    // ffi.enable=0, or FFI refused here: workers write to the server's standard error directly.
                }
            }
        }
        return self::$libc;
    }
}
