<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

/**
 * Finds the file descriptor behind a PHP stream, which PHP does not expose.
 *
 * fstat($stream) gives (dev, ino); candidate fds are stat()ed through /proc/self/fd/N until one
 * matches. The kernel hands out the lowest free fd, so the first candidates are the fds most
 * recently given up by streams we watched and the one above the highest fd seen; a full scan of
 * /proc/self/fd is the fallback (counted in $scans). Both ends of a pipe share an inode, so for
 * FIFOs the access mode (the permission bits of the /proc symlink) must match the stream's mode too.
 *
 * Why not FFI on PHP's own symbols (php_stream_cast)? Reaching the php_stream behind a resource
 * needs EG(regular_list), i.e. the layout of zend_executor_globals, which changes between PHP
 * builds. /proc is slower (two or three syscalls per new stream) but cannot silently read garbage.
 *
 * A live resource id always maps to the same fd (ids are never reused), so the mapping of a stream
 * no longer watched is kept in a bounded cache: re-watching it (await in a loop) costs no syscall.
 *
 * @internal
 */
final class FdResolver
{
    private const UNWATCHED_CACHE = 4096;
    private const FREED_HINTS = 4;

    public int $scans = 0;
    /** @var array<int, int> (int) $stream => fd of watched streams */
    private array $watched = [];
    /** @var array<int, resource> fd => watched stream */
    private array $owners = [];
    /** @var array<int, int> (int) $stream => fd, streams no longer watched, oldest first */
    private array $unwatched = [];
    /** @var list<int> fds most recently given up */
    private array $freed = [];
    private int $highest = 2;

    /** @param resource $stream */
    public function acquire(mixed $stream): int
    {
        $key = (int) $stream;
        if (isset($this->watched[$key])) {
            return $this->watched[$key];
        }
        if (isset($this->unwatched[$key])) {
            $fd = $this->claim($this->unwatched[$key]);
            unset($this->unwatched[$key]);
        } else {
            $fd = $this->find($stream);
        }
        $this->watched[$key] = $fd;
        $this->owners[$fd] = $stream;
        $this->highest = \max($this->highest, $fd);

        return $fd;
    }

    /** Whether a watched stream has this fd now. */
    public function isWatched(int $fd): bool
    {
        return isset($this->owners[$fd]);
    }

    /** The stream is no longer watched. Returns its fd, or null if another stream holds that fd now. */
    public function release(int $key): ?int
    {
        $fd = $this->watched[$key] ?? null;
        if ($fd === null) {
            return null;
        }
        unset($this->watched[$key]);
        if (!isset($this->owners[$fd]) || (int) $this->owners[$fd] !== $key) {
            return null;
        }
        unset($this->owners[$fd]);
        $this->unwatched[$key] = $fd;
        if (\count($this->unwatched) > self::UNWATCHED_CACHE) {
            $this->unwatched = \array_slice($this->unwatched, self::UNWATCHED_CACHE >> 1, null, true);
        }
        $this->freed[] = $fd;
        if (\count($this->freed) > self::FREED_HINTS) {
            \array_shift($this->freed);
        }

        return $fd;
    }

    /** @param resource $stream */
    private function find(mixed $stream): int
    {
        $stat = @\fstat($stream);
        if ($stat === false) {
            throw new \Error('The stream has no file descriptor (e.g. php://memory or a user wrapper); it cannot be watched');
        }
        $meta = \stream_get_meta_data($stream);
        $access = (\strpbrk($meta['mode'], 'r+') !== false ? 0400 : 0) | (\strpbrk($meta['mode'], 'waxc+') !== false ? 0200 : 0);
        $isFifo = ($stat['mode'] & 0170000) === 0010000;

        $candidates = $this->freed;
        \sort($candidates);
        for ($fd = $this->highest + 1; $fd <= $this->highest + 4; $fd++) {
            $candidates[] = $fd;
        }
        foreach ($candidates as $fd) {
            if ($this->matches($fd, $stat['dev'], $stat['ino'], $isFifo ? $access : null)) {
                return $this->claim($fd);
            }
        }

        $this->scans++;
        $all = \array_map('intval', \array_diff(\scandir('/proc/self/fd') ?: [], ['.', '..']));
        \sort($all);
        foreach ($all as $fd) {
            if ($this->matches($fd, $stat['dev'], $stat['ino'], $isFifo ? $access : null)) {
                return $this->claim($fd);
            }
        }

        throw new \Error('Cannot find the file descriptor of the stream in /proc/self/fd');
    }

    private function matches(int $fd, int $dev, int $ino, ?int $access): bool
    {
        if (isset($this->owners[$fd]) && \is_resource($this->owners[$fd])) {
            return false;
        }
        \clearstatcache();
        $stat = @\stat("/proc/self/fd/$fd");
        if ($stat === false || $stat['ino'] !== $ino || $stat['dev'] !== $dev) {
            return false;
        }
        if ($access !== null) {
            $link = @\lstat("/proc/self/fd/$fd");

            return $link !== false && ($link['mode'] & 0600) === $access;
        }

        return true;
    }

    private function claim(int $fd): int
    {
        $i = \array_search($fd, $this->freed, true);
        if ($i !== false) {
            \array_splice($this->freed, $i, 1);
        }

        return $fd;
    }
}
