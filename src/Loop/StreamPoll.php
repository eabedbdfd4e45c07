<?php

declare(strict_types=1);

namespace Kiln\Loop;

use Kiln\Loop\Internal\FdResolver;
use Kiln\Loop\Internal\PollApi;

/**
 * Which of some streams are readable or writable, as stream_select() tells, for a process's own loop outside the
 * event loop (the supervisor's). stream_select() fails outright for any descriptor numbered 1024 or more (glibc's
 * FD_SETSIZE), which a supervisor of a few hundred workers reaches (each worker is three descriptors there); with
 * FFI this is poll(2), which has no such limit, the streams' descriptors found once each (FdResolver). Without
 * FFI it is stream_select(), and a wait that fails for that reason sleeps out its timeout instead of spinning
 * (failedWide() says so, for the caller to report once).
 */
final class StreamPoll
{
    private const POLLIN = 0x1;
    private const POLLOUT = 0x4;
    private const POLLERR = 0x8;
    private const POLLHUP = 0x10;
    private const POLLNVAL = 0x20;

    /** null: not tried yet; false: no FFI */
    private static \FFI|false|null $ffi = null;

    private readonly FdResolver $fds;

    /** @var array<int, true> ids of the streams whose descriptor is held in $fds */
    private array $acquired = [];

    private bool $failedWide = false;

    public function __construct()
    {
        $this->fds = new FdResolver();
    }

    /** Whether waits go through poll(2) (FFI is usable), with no limit on descriptor numbers. */
    public static function isUnbounded(): bool
    {
        return self::ffi() !== false;
    }

    /**
     * Waits up to $timeout seconds (a signal cuts it short) for one of the streams to be ready.
     *
     * @template K of array-key
     * @param array<K, resource> $read
     * @param array<K, resource> $write
     * @return array{list<K>, list<K>}|null the keys of $read that are readable (or at EOF, or in error) and of
     *     $write that are writable; null when nothing is (the timeout, a signal)
     */
    public function wait(array $read, array $write, float $timeout): ?array
    {
        return self::ffi() === false ? $this->select($read, $write, $timeout) : $this->poll($read, $write, $timeout);
    }

    /** Whether a wait without FFI failed because a descriptor was numbered past stream_select()'s limit. */
    public function failedWide(): bool
    {
        return $this->failedWide;
    }

    /**
     * @template K of array-key
     * @param array<K, resource> $read
     * @param array<K, resource> $write
     * @return array{list<K>, list<K>}|null
     */
    private function poll(array $read, array $write, float $timeout): ?array
    {
        /** @var array<int, array{resource, int, list<K>, list<K>}> $streams id => stream, events, its read keys, its write keys */
        $streams = [];
        foreach ($read as $key => $stream) {
            $streams[(int) $stream] ??= [$stream, 0, [], []];
            $streams[(int) $stream][1] |= self::POLLIN;
            $streams[(int) $stream][2][] = $key;
        }
        foreach ($write as $key => $stream) {
            $streams[(int) $stream] ??= [$stream, 0, [], []];
            $streams[(int) $stream][1] |= self::POLLOUT;
            $streams[(int) $stream][3][] = $key;
        }
        // Streams gone since the last wait give their descriptors back first: a new stream may hold one of them now.
        foreach ($this->acquired as $id => $_) {
            if (!isset($streams[$id])) {
                $this->fds->release($id);
                unset($this->acquired[$id]);
            }
        }
        $ms = (int) ceil(max(0.0, $timeout) * 1000);
        if ($streams === []) {
            usleep($ms * 1000);
            return null;
        }
        $ffi = self::api();
        $littleEndian = pack('S', 1) === pack('v', 1);
        $set = $ffi->new('int32_t[' . 2 * \count($streams) . ']');
        $order = [];
        $i = 0;
        foreach ($streams as $id => [$stream, $events]) {
            $this->acquired[$id] = true;
            $set[2 * $i] = $this->fds->acquire($stream);
            $set[2 * $i + 1] = $littleEndian ? $events : $events << 16; // events, then revents (0)
            $order[$i++] = $id;
        }
        /** @var \FFI\CData $cdata */
        $cdata = $set;
        $count = $ffi->poll($cdata, $i, $ms);
        if ($count < 1) {
            return null; // the timeout, or EINTR: a signal the caller takes next
        }
        $readable = $writable = [];
        foreach ($order as $i => $id) {
            $word = $set[2 * $i + 1] & 0xFFFFFFFF;
            $revents = $littleEndian ? $word >> 16 : $word & 0xFFFF;
            if (($revents & (self::POLLIN | self::POLLERR | self::POLLHUP | self::POLLNVAL)) !== 0) {
                array_push($readable, ...$streams[$id][2]);
            }
            if (($revents & (self::POLLOUT | self::POLLERR | self::POLLHUP | self::POLLNVAL)) !== 0) {
                array_push($writable, ...$streams[$id][3]);
            }
        }
        /** @var array{list<K>, list<K>} $ready every key is one of $read's or $write's */
        $ready = [$readable, $writable];
        return $ready;
    }

    /**
     * @template K of array-key
     * @param array<K, resource> $read
     * @param array<K, resource> $write
     * @return array{list<K>, list<K>}|null
     */
    private function select(array $read, array $write, float $timeout): ?array
    {
        $seconds = (int) $timeout;
        $micro = (int) (($timeout - $seconds) * 1e6);
        if ($read === [] && $write === []) {
            usleep($seconds * 1_000_000 + $micro);
            return null;
        }
        $except = null;
        error_clear_last();
        $count = @stream_select($read, $write, $except, $seconds, $micro);
        if ($count === false && str_contains(error_get_last()['message'] ?? '', 'FD_SETSIZE')) {
            $this->failedWide = true;
            usleep($seconds * 1_000_000 + $micro);
        }
        return $count > 0 ? [array_keys($read), array_keys($write)] : null;
    }

    /** @return PollApi */
    private static function api(): object
    {
        $ffi = self::ffi();
        \assert($ffi !== false);
        /** @var PollApi $api */
        $api = self::view($ffi);
        return $api;
    }

    /** FFI values have no static shape: this lets them be annotated with PollApi. */
    private static function view(mixed $value): mixed
    {
        return $value;
    }

    private static function ffi(): \FFI|false
    {
        if (self::$ffi === null) {
            try {
                // struct pollfd { int fd; short events; short revents; }, passed as int32_t pairs (PollApi).
                self::$ffi = \extension_loaded('ffi') ? \FFI::cdef('int poll(int32_t *fds, unsigned long nfds, int timeout);', 'libc.so.6') : false;
            } catch (\Throwable) {
                self::$ffi = false;
            }
        }
        return self::$ffi;
    }
}
