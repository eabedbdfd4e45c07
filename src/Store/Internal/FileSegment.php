<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

use Kiln\Store\StoreException;

/**
 * A file (in /dev/shm: memory, not disk) read and written with pread-like seeks, locked with flock.
 *
 * @internal
 */
final class FileSegment implements Segment
{
    /** @var ?resource */
    private $file = null;

    private int $pid = 0;

    public function __construct(private readonly string $path) {}

    public function open(int $size): int
    {
        $stat = fstat($this->handle());
        $current = $stat === false ? 0 : $stat['size'];
        if ($current === 0 && !ftruncate($this->handle(), max(0, $size))) {
            throw new StoreException("Cannot size the shared state file {$this->path} to $size bytes");
        }
        return $current ?: $size;
    }

    public function read(int $offset, int $length): string
    {
        $file = $this->handle();
        fseek($file, $offset);
        $data = fread($file, max(1, $length));
        if ($data === false || \strlen($data) !== $length) {
            throw new StoreException("Short read from the shared state file {$this->path}");
        }
        return $data;
    }

    public function write(int $offset, string $data): void
    {
        $file = $this->handle();
        fseek($file, $offset);
        if (fwrite($file, $data) !== \strlen($data)) {
            throw new StoreException("Short write to the shared state file {$this->path}");
        }
    }

    public function lock(): void
    {
        if (!flock($this->handle(), LOCK_EX)) {
            throw new StoreException("Cannot lock the shared state file {$this->path}");
        }
    }

    public function unlock(): void
    {
        flock($this->handle(), LOCK_UN);
    }

    public function remove(): void
    {
        @unlink($this->path);
    }

    /** @return resource */
    private function handle()
    {
        $pid = getmypid();
        if ($this->file !== null && $this->pid === $pid) {
            return $this->file;
        }
        // After fork the inherited descriptor shares its flock with the parent: open our own.
        $this->file = self::openOwned($this->path);
        $this->pid = (int) $pid;
        return $this->file;
    }

    /** @return resource */
    private static function openOwned(string $path)
    {
        $old = umask(0o077);
        $file = @fopen($path, 'c+be'); // e: close-on-exec, so no program a worker starts (php-cgi) holds the table
        umask($old);
        if ($file === false) {
            throw new StoreException("Cannot open the shared state file $path: " . (error_get_last()['message'] ?? ''));
        }
        $stat = fstat($file);
        // /dev/shm is world-writable: refuse a file another user planted to read or skew our state.
        if ($stat === false || ($stat['mode'] & 0o170000) !== 0o100000 || $stat['uid'] !== posix_geteuid()
            || ($stat['mode'] & 0o077) !== 0) {
            fclose($file);
            throw new StoreException("Refusing the shared state file $path: not a private regular file of this user");
        }
        stream_set_read_buffer($file, 0);
        stream_set_write_buffer($file, 0);
        return $file;
    }
}
