<?php

declare(strict_types=1);

namespace Kiln\Server;

/** The supervisor's pid file: refuses to take over one held by a live process; removed on exit. */
final class PidFile
{
    private ?int $owner = null;

    public function __construct(public readonly string $path) {}

    /** The pid recorded in the file when that process is alive, else null. */
    public static function livePid(string $path): ?int
    {
        $text = @file_get_contents($path);
        if ($text === false) {
            return null;
        }
        $pid = (int) trim($text);
        if ($pid <= 0 || !self::alive($pid)) {
            return null;
        }
        return $pid;
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

    public function check(): void
    {
        $pid = self::livePid($this->path);
        if ($pid !== null && $pid !== getmypid()) {
            throw new ServerException("Pid file {$this->path} is held by running process $pid: "
                . "stop it with `kiln stop --pid-file={$this->path}` or choose another --pid-file");
        }
    }

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
        if ($this->owner !== null && $this->owner === getmypid() && self::livePid($this->path) === $this->owner) {
            @unlink($this->path);
        }
        $this->owner = null;
    }
}
