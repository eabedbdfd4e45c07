<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Catches what reaches the process's standard output while a script runs without Kiln's output buffer,
 * which only happens when the script ends that buffer itself (`while (ob_get_level()) ob_end_clean();`,
 * as error pages and download scripts do): from then on PHP writes straight to file descriptor 1. start()
 * points fd 1 at an anonymous in-memory file (memfd_create); take() returns what was written and points
 * fd 1 back. Costs nothing while no script ends the buffer.
 *
 * @internal
 */
final class Stdout
{
    private static self|false|null $instance = null;

    /** The process that made the instance: a forked child makes its own (a shared memfd would mix outputs). */
    private static int $pid = 0;

    /** The saved descriptor of the real standard output while redirected; -1 when not. */
    private int $saved = -1;

    /**
     * @param resource $file the memfd, read and emptied through this stream
     */
    private function __construct(
        private readonly \FFI $libc,
        private readonly int $fd,
        private readonly mixed $file,
    ) {}

    public static function get(): ?self
    {
        if (self::$instance === null || self::$pid !== getmypid()) {
            self::$pid = (int) getmypid();
            self::$instance = false;
            try {
                $libc = \FFI::cdef('int memfd_create(const char *name, unsigned int flags); int dup(int fd); int dup2(int fd, int fd2); int close(int fd);', 'libc.so.6');
                $fd = Native::int($libc->memfd_create('kiln-script-stdout', 1)); // @phpstan-ignore method.notFound (FFI; 1: MFD_CLOEXEC)
                $file = $fd < 0 ? false : @fopen("php://fd/$fd", 'r+b');
                if ($file !== false) {
                    self::$instance = new self($libc, $fd, $file);
                }
            } catch (\Throwable) {
                self::$instance = false;
            }
        }
        return self::$instance === false ? null : self::$instance;
    }

    public function isCapturing(): bool
    {
        return $this->saved >= 0;
    }

    /** From now on, what PHP writes to standard output is kept. */
    public function start(): void
    {
        if ($this->saved >= 0) {
            return;
        }
        $saved = Native::int($this->libc->dup(1)); // @phpstan-ignore method.notFound
        if ($saved < 0) {
            return;
        }
        if (Native::int($this->libc->dup2($this->fd, 1)) < 0) { // @phpstan-ignore method.notFound
            $this->libc->close($saved); // @phpstan-ignore method.notFound
            return;
        }
        $this->saved = $saved;
    }

    /** Restores standard output and returns what was written to it since start(). */
    public function take(): string
    {
        if ($this->saved < 0) {
            return '';
        }
        $this->libc->dup2($this->saved, 1); // @phpstan-ignore method.notFound
        $this->libc->close($this->saved); // @phpstan-ignore method.notFound
        $this->saved = -1;
        rewind($this->file);
        $bytes = (string) stream_get_contents($this->file);
        ftruncate($this->file, 0);
        rewind($this->file);
        return $bytes;
    }
}
