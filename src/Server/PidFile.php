<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The supervisor's pid file: refuses to take over one held by a running supervisor; removed on exit.
 *
 * A pid file counts only while the process it names is a Kiln supervisor: one killed with `kill -9` leaves its
 * file behind, and its pid is later given to some other process. Where /proc is there, that process must
 * carry the supervisor's process title (its /proc/PID/cmdline); elsewhere any live process counts.
 *
 * Taking the file is atomic: check() locks it (flock, exclusive) before it looks at what it names, and the lock is
 * held until the supervisor and its last worker have exited (the workers inherit it; background processes let go
 * of it, forgetInChild()), so of two `kiln serve` started at the same moment with one --pid-file exactly one gets
 * it (docs/design/029-process-hygiene.md). The pid is
 * written into the locked file in place: a rename would put a new, unlocked file at the path.
 */
final class PidFile
{
    /** The supervisor's process title (cli_set_process_title), which /proc/PID/cmdline shows. */
    public const SUPERVISOR_TITLE = 'kiln: supervisor';

    private ?int $owner = null;

    /** @var resource|null the open, locked file (close-on-exec: no program the server runs keeps it) */
    private mixed $lock = null;

    /**
     * @param ?\Closure(resource): void $opened called with each file opened, before it is locked (tests: the file
     *        removed or replaced at that moment, as a supervisor stopping does)
     */
    public function __construct(public readonly string $path, private readonly ?\Closure $opened = null) {}

    /** The pid recorded in the file, whatever runs under it; null without a file or a pid in it. */
    public static function recordedPid(string $path): ?int
    {
        $text = @file_get_contents($path);
        if ($text === false) {
            return null;
        }
        $pid = (int) trim($text);
        return $pid > 0 ? $pid : null;
    }

    /** The pid recorded in the file when that process is a running Kiln supervisor, else null. */
    public static function livePid(string $path): ?int
    {
        $pid = self::recordedPid($path);
        return $pid !== null && self::isSupervisor($pid) ? $pid : null;
    }

    /** Whether $pid is a running Kiln supervisor: the only process `kiln stop|reload` may signal. */
    public static function isSupervisor(int $pid): bool
    {
        if (!self::alive($pid)) {
            return false;
        }
        if (@file_get_contents('/proc/self/cmdline') === false) {
            return true; // No /proc: a live process is all that can be known.
        }
        // The title overwrites the arguments and is padded with NULs (or spaces); a zombie's cmdline is empty.
        $cmdline = @file_get_contents("/proc/$pid/cmdline");
        return $cmdline !== false && rtrim($cmdline, "\0 ") === self::SUPERVISOR_TITLE;
    }

    /** Why a pid file naming $pid (that is not a running supervisor) is stale, for a message. */
    public static function whyStale(int $pid): string
    {
        return self::alive($pid) ? "process $pid is not a Kiln supervisor" : "process $pid is gone";
    }

    public static function alive(int $pid): bool
    {
        if (!posix_kill($pid, 0)) {
            return posix_get_last_error() === 1; // EPERM: alive, someone else's
        }
        // A zombie still answers kill(0); it is gone for our purposes.
        $stat = @file_get_contents("/proc/$pid/stat");
        return $stat === false || !preg_match('/^\d+ \(.*\) Z/s', $stat);
    }

    /**
     * Locks the file (creating it empty when there is none), then throws when a running supervisor holds it.
     * Returns the pid a stale file names (a process that is not a Kiln supervisor, or a gone one), which write()
     * will replace; null when there is no pid to replace. Calling it again once the lock is held only re-reads.
     */
    public function check(): ?int
    {
        $this->lock();
        $pid = self::recordedPid($this->path);
        if ($pid === null || $pid === getmypid()) {
            return null;
        }
        if (self::isSupervisor($pid)) {
            // A supervisor that does not hold the lock: one started before pid files were locked, or one whose
            // file system has no flock (some network file systems).
            $this->unlock();
            throw new ServerException("Pid file {$this->path} is held by running process $pid: "
                . "stop it with `kiln stop --pid-file={$this->path}` or choose another --pid-file");
        }
        return $pid;
    }

    /** Records this process, which must already carry SUPERVISOR_TITLE so `kiln stop|reload` will find it. */
    public function write(): void
    {
        $this->check();
        \assert(\is_resource($this->lock));
        $pid = (int) getmypid();
        if (!ftruncate($this->lock, 0) || @fwrite($this->lock, $pid . "\n") !== \strlen($pid . "\n") || !fflush($this->lock)) {
            throw new ServerException("Cannot write pid file {$this->path}: choose a writable --pid-file");
        }
        $this->owner = $pid;
    }

    /**
     * Opens the file and takes its lock, or throws when another process has it. A file removed or replaced
     * between the open and the lock (a supervisor stopping at that moment) is opened again: the lock must be
     * on the file the path names.
     */
    private function lock(): void
    {
        for ($attempt = 0; $this->lock === null; $attempt++) {
            $file = @fopen($this->path, 'ce');
            if ($file === false) {
                throw new ServerException("Cannot write pid file {$this->path}: choose a writable --pid-file");
            }
            $this->opened !== null && ($this->opened)($file);
            $locked = flock($file, LOCK_EX | LOCK_NB, $wouldBlock);
            // Not locked and not because of another holder: no flock on this file system; the file is then used
            // unlocked, as it was before locks (check() alone).
            $held = !$locked && $wouldBlock === 1;
            if ($this->isAtPath($file)) {
                if ($held) {
                    fclose($file);
                    throw new ServerException($this->heldBy());
                }
                $this->lock = $file;
            } else {
                // Held or not, it is not the file the path names (any more): that one is looked at instead.
                fclose($file);
                if ($attempt >= 10) {
                    throw new ServerException("Cannot lock pid file {$this->path}: it keeps being replaced");
                }
            }
        }
    }

    /** @param resource $file */
    private function isAtPath(mixed $file): bool
    {
        $opened = fstat($file);
        $named = @stat($this->path);
        return $opened !== false && $named !== false && $opened['ino'] === $named['ino'] && $opened['dev'] === $named['dev'];
    }

    /**
     * In a process forked from the supervisor that does not serve (a task worker, a user process): lets go of its
     * copy of the lock without touching the file. The lock is on the open file, shared by every process that has it:
     * the supervisor and its workers still hold it. A process that may outlive a killed supervisor must not keep
     * it, or no server could take the file until someone ended that process (docs/design/029).
     */
    public function forgetInChild(): void
    {
        $this->unlock();
        $this->owner = null;
    }

    private function unlock(): void
    {
        if ($this->lock !== null) {
            fclose($this->lock); // the lock goes with the last descriptor (workers may still hold theirs)
            $this->lock = null;
        }
    }

    /** Why the file is locked by another process: a supervisor, one starting, or processes a killed one left. */
    private function heldBy(): string
    {
        $pid = self::recordedPid($this->path);
        return match (true) {
            $pid === null => "Pid file {$this->path} is held by another `kiln serve` that is starting: "
                . 'choose another --pid-file to run a second server',
            self::isSupervisor($pid) => "Pid file {$this->path} is held by running process $pid: "
                . "stop it with `kiln stop --pid-file={$this->path}` or choose another --pid-file",
            default => "Pid file {$this->path} is held by another server: one that is starting, or what is left of "
                . "supervisor $pid, which is gone (workers finishing their requests): wait for them to exit or choose another --pid-file",
        };
    }

    /**
     * Removes the file if this process wrote it (a forked worker never removes it), or if it locked the file and
     * left it empty (created by check(), then the start failed), then lets go of the lock.
     */
    public function remove(): void
    {
        if ($this->owner !== null && $this->owner === getmypid() && self::recordedPid($this->path) === $this->owner) {
            @unlink($this->path);
        } elseif ($this->owner === null && $this->lock !== null && ($stat = fstat($this->lock)) !== false && $stat['size'] === 0) {
            @unlink($this->path);
        }
        $this->owner = null;
        $this->unlock();
    }
}
