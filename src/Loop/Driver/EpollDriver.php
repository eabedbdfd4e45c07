<?php

declare(strict_types=1);

namespace Kiln\Loop\Driver;

use Kiln\Loop\Internal\AbstractDriver;
use Kiln\Loop\Internal\EpollApi;
use Kiln\Loop\Internal\EpollEvent;
use Kiln\Loop\Internal\FdResolver;
use Kiln\Loop\LoopException;

/**
 * epoll(7) through FFI: no FD_SETSIZE limit, cost per tick proportional to ready streams.
 * Level-triggered, like select. Linux only; needs ext-ffi with FFI enabled for the CLI.
 *
 * Registrations carry the stream's resource id (data), not its fd: ids are never reused, so an
 * event can never be attributed to a newer stream that got the same fd number. Data already read
 * into a stream's PHP buffer is invisible to epoll; such streams are reported readable without
 * waiting, as stream_select does. A stream closed while watched is dropped by the kernel; a sweep
 * at most once a second finds it and calls its watchers once (select does so at once).
 *
 * A stream no longer watched is removed from the kernel's set just before the next wait, not at once: a
 * watcher disabled and enabled again in between (a Fiber that awaits the same socket after each read) costs
 * no epoll_ctl, where it cost two. Additions and changes go at once, so their errors reach the code that
 * watches. A removal is dropped when another watched stream holds that fd number by then (the stream was
 * closed meanwhile, which removed it); a cancelled watcher's removal goes at once (its stream is usually
 * closed next, while a copy of the fd in a child process would keep it registered).
 */
final class EpollDriver extends AbstractDriver
{
    private const IN = 0x001;
    private const OUT = 0x004;
    private const ERR_HUP = 0x008 | 0x010;
    private const MAX_EVENTS = 1024;
    private const SWEEP_NS = 1_000_000_000;

    /**
     * How the loop calls epoll_wait() and epoll_ctl(): through call_user_func() called by this constant, never
     * written as `call_user_func(...)` (PHP compiles that literal call into the call it names). A call to an FFI
     * function is a trampoline, where the tracing JIT gives up the trace: the poll and the tick around it then ran in
     * the interpreter, every turn. Called from inside call_user_func(), the trampoline is not part of any trace.
     */
    private const VIA = 'call_user_func';

    private static ?\FFI $ffi = null;

    private readonly FdResolver $fds;
    private int $epfd = -1;
    private ?\FFI\CData $events = null;
    /** @var array<int, int>|null the event buffer seen as 32-bit words (a uint32_t * CData, read by index) */
    private mixed $words = null;
    /** @var EpollApi|null self::$ffi, annotated for the poll */
    private static mixed $api = null;
    /** @var array{int, int} words per event, and the word of the event's data that holds the stream key */
    private static array $layout = [3, 1];
    private ?\FFI\CData $event = null;
    /** @var array<int, int> (int) $stream => the event mask its watchers want */
    private array $masks = [];
    /** @var array<int, int> (int) $stream => the event mask the kernel has (or was asked for: EPERM files) */
    private array $registered = [];
    /** @var array<int, int|null> (int) $stream => its fd (null: another stream had it), no longer watched, removal not sent */
    private array $dropping = [];
    /** @var array<int, true> regular files (epoll refuses them with EPERM): always ready, as select reports them */
    private array $files = [];
    /** epoll_ctl calls made (for tests and diagnostics). */
    private int $ctlCalls = 0;
    /** @var array<int, resource> */
    private array $streams = [];
    /** @var array<int, true> streams with unread PHP-buffered data, or not pollable (regular files) */
    private array $forced = [];
    private int $lastSweep = 0;

    public function __construct()
    {
        parent::__construct();
        $this->fds = new FdResolver();
    }

    public static function isSupported(): bool
    {
        return self::unsupportedReason() === null;
    }

    /** Why this process cannot run the driver (for a start-up line), or null when it can. */
    public static function unsupportedReason(): ?string
    {
        if (\PHP_OS_FAMILY !== 'Linux') {
            return 'epoll is Linux only';
        }
        if (!\extension_loaded('ffi')) {
            return 'the FFI extension (php-ffi) is not loaded';
        }
        try {
            self::ffi();

            return null;
        } catch (\Throwable $e) {
            return 'FFI cannot be used here (' . $e->getMessage() . ')';
        }
    }

    public function capacity(): int
    {
        $limits = \function_exists('posix_getrlimit') ? \posix_getrlimit() : false;
        $soft = \is_array($limits) ? ($limits['soft openfiles'] ?? null) : null;

        return \is_numeric($soft) ? \max(0, (int) $soft - 64) : 65536;
    }

    public function __destruct()
    {
        if ($this->epfd >= 0) {
            self::ffi()->close($this->epfd);
        }
    }

    /** Full /proc/self/fd scans done to find a stream's fd (the slow path). */
    public function fdScans(): int
    {
        return $this->fds->scans;
    }

    /** epoll_ctl calls made so far: a watcher disabled and enabled again before the next wait adds none. */
    public function interestChanges(): int
    {
        return $this->ctlCalls;
    }

    protected function ioChanged(int $key, mixed $stream, bool $read): void
    {
        \assert(\is_resource($stream));
        $mask = (isset($this->readers[$key]) ? self::IN : 0) | (isset($this->writers[$key]) ? self::OUT : 0);
        if ($mask === 0) {
            unset($this->masks[$key], $this->streams[$key], $this->forced[$key]);
            if (isset($this->registered[$key])) {
                // The fd is given up now, so a socket opened next (with the same number) is found at once.
                $this->dropping[$key] = $this->fds->release($key);
            } else {
                $this->fds->release($key);
            }

            return;
        }
        $fd = $this->fds->acquire($stream); // first: a stream without an fd is refused before anything is recorded
        $this->masks[$key] = $mask;
        $this->streams[$key] = $stream;
        unset($this->dropping[$key]); // disabled and enabled again before the wait: the kernel still has it
        $old = $this->registered[$key] ?? 0;
        if ($mask !== $old) {
            $this->register($key, $fd, $mask, $old);
        } elseif (isset($this->files[$key])) {
            $this->forced[$key] = true;
        }
        if ($read && $mask & self::IN && \stream_get_meta_data($stream)['unread_bytes'] > 0) {
            $this->forced[$key] = true;
        }
    }

    protected function ioCancelled(int $key): void
    {
        if (\array_key_exists($key, $this->dropping)) {
            $this->remove($key);
        }
    }

    /** Sends the removals of the streams no longer watched (just before a wait). */
    private function removeDropped(): void
    {
        foreach ($this->dropping as $key => $_) {
            $this->remove($key);
        }
    }

    private function remove(int $key): void
    {
        $fd = $this->dropping[$key];
        unset($this->dropping[$key], $this->registered[$key], $this->files[$key]);
        // EPOLL_CTL_DEL fails harmlessly if the fd was closed meanwhile (which removed the stream) and not reused.
        if ($fd !== null && $this->epfd >= 0 && !$this->fds->isWatched($fd)) {
            $this->ctl(2, $fd, 0, $key);
        }
    }

    private function register(int $key, int $fd, int $mask, int $old): void
    {
        $op = $old === 0 ? 1 : 3; // EPOLL_CTL_ADD / EPOLL_CTL_MOD
        $errno = $this->ctl($op, $fd, $mask, $key);
        if ($errno !== 0) {
            if ($errno === 17 || $errno === 2) { // EEXIST / ENOENT: retry with the other op
                $errno = $this->ctl($op === 1 ? 3 : 1, $fd, $mask, $key);
            }
            if ($errno === 1) { // EPERM: regular files are always ready, as select reports them
                $this->files[$key] = true;
                $this->forced[$key] = true;
            } elseif ($errno !== 0) {
                throw new LoopException("epoll_ctl() failed for fd $fd: errno $errno");
            }
        }
        $this->registered[$key] = $mask;
    }

    protected function poll(int $timeoutNs): void
    {
        if ($this->dropping !== []) {
            $this->removeDropped();
        }
        if ($this->masks === []) {
            if ($timeoutNs > 0) {
                \usleep(\intdiv($timeoutNs + 999, 1000));
            }

            return;
        }
        $ms = $timeoutNs < 0 || $timeoutNs >= self::SWEEP_NS ? 1000 : \intdiv($timeoutNs + 999_999, 1_000_000);
        $forced = $this->forced;
        if ($forced !== []) {
            $ms = 0;
            $this->forced = [];
        }
        if ($this->events === null || $this->words === null || self::$api === null) {
            self::$api = self::ffi();
            $this->events = self::$api->new('struct epoll_event[' . self::MAX_EVENTS . ']');
            $this->words = self::words($this->events);
        }
        /** @var int $n */
        $n = (self::VIA)([self::$api, 'epoll_wait'], $this->epfd >= 0 ? $this->epfd : $this->epfd(), $this->events, self::MAX_EVENTS, $ms); // -1 on EINTR
        // The events are read as 32-bit words: one FFI read each, no struct CData made per event.
        $words = $this->words;
        [$stride, $dataWord] = self::$layout;
        $unknown = false;
        for ($i = 0, $at = 0; $i < $n; $i++, $at += $stride) {
            $key = $words[$at + $dataWord];
            $stream = $this->streams[$key] ?? null;
            if ($stream === null) {
                $unknown = true;
                continue;
            }
            $flags = $words[$at];
            if ($forced !== []) {
                unset($forced[$key]);
            }
            if ($flags & (self::IN | self::ERR_HUP) && isset($this->readers[$key])) {
                $this->dispatchReaders($key, $stream);
            }
            if ($flags & (self::OUT | self::ERR_HUP) && isset($this->writers[$key])) {
                $this->dispatchWriters($key, $stream);
            }
        }
        foreach ($forced as $key => $_) {
            $stream = $this->streams[$key] ?? null;
            if ($stream !== null) {
                if (isset($this->readers[$key])) {
                    $this->dispatchReaders($key, $stream);
                }
                if (isset($this->writers[$key])) {
                    $this->dispatchWriters($key, $stream);
                }
            }
        }
        if ($unknown) {
            $this->rebuild(); // an fd we stopped watching is still registered (a dup survived): start over
        }
        $now = \hrtime(true);
        if ($now - $this->lastSweep >= self::SWEEP_NS) {
            $this->lastSweep = $now;
            $this->reapClosedStreams();
        }
    }

    /**
     * Calls the readable watchers of a stream; then, unless each of them reads without PHP's buffer, looks
     * for data PHP read ahead (invisible to epoll) so the stream is reported again without waiting.
     *
     * @param resource $stream
     */
    private function dispatchReaders(int $key, mixed $stream): void
    {
        $buffered = false;
        foreach ($this->readers[$key] as $watcher) {
            if ($watcher->enabled) {
                ($watcher->callback)($watcher->id, $stream);
            }
            $buffered = $buffered || !$watcher->unbuffered;
        }
        if ($buffered && isset($this->readers[$key]) && \is_resource($stream)
            && \stream_get_meta_data($stream)['unread_bytes'] > 0) {
            $this->forced[$key] = true;
        }
    }

    /** @param resource $stream */
    private function dispatchWriters(int $key, mixed $stream): void
    {
        foreach ($this->writers[$key] as $watcher) {
            if ($watcher->enabled) {
                ($watcher->callback)($watcher->id, $stream);
            }
        }
    }

    private function rebuild(): void
    {
        self::ffi()->close($this->epfd);
        $this->epfd = -1;
        $this->registered = [];
        $this->dropping = [];
        foreach ($this->masks as $key => $mask) {
            $this->registered[$key] = $mask;
            $this->ctl(1, $this->fds->acquire($this->streams[$key]), $mask, $key);
        }
    }

    /** epoll_ctl(): 0 when it succeeded, else its errno. */
    private function ctl(int $op, int $fd, int $mask, int $key): int
    {
        $buffer = $this->event ??= self::ffi()->new('struct epoll_event');
        /** @var EpollEvent $event */
        $event = self::view($buffer);
        $event->events = $mask;
        $event->data = $key;
        $this->ctlCalls++;

        /** @var int $result */
        $result = (self::VIA)([self::ffi(), 'epoll_ctl'], $this->epfd(), $op, $fd, \FFI::addr($buffer));

        return $result === 0 ? 0 : self::errno(); // read at once: nothing may run between the call and errno
    }

    private function epfd(): int
    {
        if ($this->epfd < 0) {
            $this->epfd = self::ffi()->epoll_create1(0x80000); // EPOLL_CLOEXEC
            if ($this->epfd < 0) {
                throw new LoopException('epoll_create1() failed: errno ' . self::errno());
            }
        }

        return $this->epfd;
    }

    private static function errno(): int
    {
        return self::ffi()->__errno_location()[0];
    }

    /** @return EpollApi */
    private static function ffi(): object
    {
        if (self::$ffi === null) {
            // struct epoll_event is packed on x86-64 only (12 bytes there, 16 elsewhere); the attribute
            // must follow `struct` for PHP's FFI parser. epoll_data_t is declared as the u64 we use.
            $packed = \php_uname('m') === 'x86_64' ? '__attribute__((packed))' : '';
            self::$ffi = \FFI::cdef(<<<C
                struct $packed epoll_event { uint32_t events; uint64_t data; };
                int epoll_create1(int flags);
                int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event);
                int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout);
                int close(int fd);
                int *__errno_location(void);
                C, 'libc.so.6');
        }
        /** @var EpollApi $lib */
        $lib = self::view(self::$ffi);

        return $lib;
    }

    /**
     * A uint32_t pointer over the event buffer (which must outlive it: it is kept in $events), and the
     * layout of an event in words: 3 (packed, x86-64) or 4, the key being the low word of the 64-bit data,
     * which holds a resource id (below 2^32).
     *
     * @return array<int, int> a uint32_t * CData, read by index
     */
    private static function words(\FFI\CData $buffer): mixed
    {
        $size = \intdiv(\FFI::sizeof($buffer), self::MAX_EVENTS);
        $littleEndian = \pack('L', 1) === \pack('V', 1);
        self::$layout = [\intdiv($size, 4), ($size === 12 ? 1 : 2) + ($littleEndian ? 0 : 1)];
        return self::ffi()->cast('uint32_t *', \FFI::addr($buffer));
    }

    /** FFI values have no static shape: this lets them be annotated with EpollApi/EpollEvent. */
    private static function view(mixed $value): mixed
    {
        return $value;
    }
}
