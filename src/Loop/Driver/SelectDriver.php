<?php

declare(strict_types=1);

namespace Kiln\Loop\Driver;

use Kiln\Loop\Internal\AbstractDriver;
use Kiln\Loop\LoopException;

/**
 * stream_select() driver: portable, the fastest for a few hundred streams, and unusable for file
 * descriptors >= FD_SETSIZE (1024), which PHP cannot put in an fd_set.
 */
final class SelectDriver extends AbstractDriver
{
    /** FD_SETSIZE minus a reserve for the files and pipes a worker opens besides its sockets. */
    public const CAPACITY = 1024 - 64;

    /** @var array<int, resource> */
    private array $readStreams = [];
    /** @var array<int, resource> */
    private array $writeStreams = [];

    public function capacity(): int
    {
        return self::CAPACITY;
    }

    protected function ioChanged(int $key, mixed $stream, bool $read): void
    {
        \assert(\is_resource($stream));
        if ($read) {
            if (isset($this->readers[$key])) {
                $this->readStreams[$key] = $stream;
            } else {
                unset($this->readStreams[$key]);
            }
        } elseif (isset($this->writers[$key])) {
            $this->writeStreams[$key] = $stream;
        } else {
            unset($this->writeStreams[$key]);
        }
    }

    protected function poll(int $timeoutNs): void
    {
        if ($this->readStreams === [] && $this->writeStreams === []) {
            if ($timeoutNs > 0) {
                \usleep(\intdiv($timeoutNs + 999, 1000)); // a signal cuts it short
            }

            return;
        }
        $read = $this->readStreams;
        $write = $this->writeStreams;
        $except = null;
        try {
            // A signal interrupts select (EINTR): it returns false with a warning, which is harmless here.
            if ($timeoutNs < 0) {
                $ready = @\stream_select($read, $write, $except, null);
            } else {
                $us = \intdiv($timeoutNs + 999, 1000);
                $ready = @\stream_select($read, $write, $except, \intdiv($us, 1_000_000), $us % 1_000_000);
            }
        } catch (\TypeError|\ValueError) {
            $this->reapClosedStreams(); // a watched stream was closed without cancelling its watchers

            return;
        }
        if ($ready === false && str_contains(\error_get_last()['message'] ?? '', 'FD_SETSIZE')) {
            // Not a signal (that returns false too): a descriptor past 1023, which no later wait gets past either.
            throw new LoopException('stream_select() cannot watch descriptors numbered 1024 or more, and this process has '
                . 'such a stream; the epoll driver (php-ffi) can');
        }
        if (!$ready) {
            return;
        }
        foreach ($read as $key => $stream) {
            foreach ($this->readers[$key] ?? [] as $watcher) {
                if ($watcher->enabled) {
                    ($watcher->callback)($watcher->id, $stream);
                }
            }
        }
        foreach ($write as $key => $stream) {
            foreach ($this->writers[$key] ?? [] as $watcher) {
                if ($watcher->enabled) {
                    ($watcher->callback)($watcher->id, $stream);
                }
            }
        }
    }
}
