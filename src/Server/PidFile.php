<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The supervisor's pid file: refuses to take over one held by a running supervisor; removed on exit.
 *
 * A pid file counts only while the process it names is a Kiln supervisor: one killed with `kill -9` leaves its
 * file behind, and its pid is later given to some other process. Where /proc is there, that process must
 * carry the supervisor's process title (its /proc/PID/cmdline); elsewhere any live process counts.
 */
final class PidFile
{
    /** The supervisor's process title (cli_set_process_title), which /proc/PID/cmdline shows. */
    public const SUPERVISOR_TITLE = 'kiln: supervisor';

    private ?int $owner = null;

    public function __construct(public readonly string $path) {}

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
     * Throws when a running supervisor holds the file. Returns the pid a stale file names (a process that is not
     * a Kiln supervisor, or a gone one), which write() will replace; null when there is no file to replace.
     */
    public function check(): ?int
    {
        $pid = self::recordedPid($this->path);
        if ($pid === null || $pid === getmypid()) {
            return null;
        }
        if (self::isSupervisor($pid)) {
            throw new ServerException("Pid file {$this->path} is held by running process $pid: "
                . "stop it with `kiln stop --pid-file={$this->path}` or choose another --pid-file");
        }
        return $pid;
    }

    /** Records this process, which must already carry SUPERVISOR_TITLE so `kiln stop|reload` will find it. */
    public function write(): void
    {
        $this->check();
        $pid = (int) getmypid();
        $tmp = $this->path . '.' . $pid . '.tmp';
        if (@file_put_contents($tmp, $pid . "\n") === false || !@rename($tmp, $this->path)) {
            @unlink($tmp);
            throw new ServerException("Cannot write pid file {$this->path}: choose a writable --pid-file");
        }
        $this->owner = $pid;
    }

    /** Removes the file if this process wrote it (a forked worker never removes it). */
    public function remove(): void
    {
        if ($this->owner !== null && $this->owner === getmypid() && self::recordedPid($this->path) === $this->owner) {
            @unlink($this->path);
        }
        $this->owner = null;
    }
}
