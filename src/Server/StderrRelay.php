<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Server\Internal\StderrPipe;

/**
 * Files what workers write to their standard error in the error log: each worker's fd 2 is a pipe the
 * supervisor reads, and every message (PHP's warnings and fatal errors, error_log() without an error_log
 * setting, a script's fwrite(STDERR, …)) becomes an entry of the log's format (--error-log-format), with its
 * time, a level taken from PHP's prefix, and the worker's label and pid. Without FFI a worker keeps the
 * server's standard error, where PHP's messages appear in its own words (the supervisor's debug line says so).
 *
 * The supervisor reads the pipes in its loop, which never runs app code: a worker writing faster than the
 * log takes waits on its write, as it would on a terminal or a full disk; nothing is dropped.
 */
final class StderrRelay
{
    /** The most pipes kept open for the processes of exited workers (see reaped()); past it the oldest is closed. */
    public const MAX_LINGERING = 64;

    /** How long a message is held open for the rest of its trace once the pipe is quiet (StderrEntries::flush()). */
    public const QUIET_SECONDS = 0.01;

    /** @var array<int, WorkerHandle> exited workers whose pipe another process still holds, by a key of their own */
    private array $lingering = [];

    /** @var array<int, array{WorkerHandle, float}> workers holding an open message, by object id, with when their pipe went quiet */
    private array $holding = [];

    private int $lastKey = 0;

    public function __construct(private readonly Log $log) {}

    /** Whether workers get the pipe (FFI is usable). */
    public static function supported(): bool
    {
        return StderrPipe::available();
    }

    /** A pipe for the worker about to be forked; null: it keeps the server's standard error. */
    public function open(): ?StderrPipe
    {
        return StderrPipe::open();
    }

    /** In the worker just forked. */
    public function adopt(StderrPipe $pipe): void
    {
        if ($pipe->becomeStderr()) {
            $this->log->file()->releaseStderr(); // a log rotation in the worker must not take fd 2 back from the pipe
        }
    }

    /** In the supervisor once the worker is forked: the handle keeps the read end. */
    public function attach(WorkerHandle $handle, StderrPipe $pipe): void
    {
        $pipe->closeWriteEnd();
        $handle->stderr = $pipe->reader;
        $handle->stderrEntries = new StderrEntries();
    }

    /** Files what the worker wrote (its pipe was readable); at EOF the pipe is closed. */
    public function read(WorkerHandle $handle): void
    {
        $entries = $handle->stderrEntries;
        $stream = $handle->stderr;
        if ($entries === null || !\is_resource($stream)) {
            return;
        }
        // Up to 1 MiB a turn: a worker filling its pipe without pause cannot keep the supervisor from the others.
        for ($read = 0; $read < 1_048_576; $read += \strlen($data)) {
            $data = @fread($stream, 65536);
            if ($data === false || $data === '') {
                if ($data === false || feof($stream)) {
                    $this->file($handle, $entries->finish());
                    $handle->closeStderr();
                    unset($this->holding[spl_object_id($handle)]);
                } elseif ($entries->holding()) {
                    $this->holding[spl_object_id($handle)] = [$handle, microtime(true)];
                }
                return;
            }
            $this->file($handle, $entries->feed($data));
        }
        if ($entries->holding()) {
            $this->holding[spl_object_id($handle)] = [$handle, microtime(true)];
        }
    }

    /** Seconds until flushQuiet() has a message to file; null: none is held. */
    public function nextFlush(float $now): ?float
    {
        $next = null;
        foreach ($this->holding as [, $since]) {
            $next = min($next ?? PHP_FLOAT_MAX, max(0.0, $since + self::QUIET_SECONDS - $now));
        }
        return $next;
    }

    /** Files the messages held open by pipes that stayed quiet for QUIET_SECONDS: nothing came to continue them. */
    public function flushQuiet(float $now): void
    {
        foreach ($this->holding as $id => [$handle, $since]) {
            if ($now - $since >= self::QUIET_SECONDS) {
                unset($this->holding[$id]);
                if ($handle->stderrEntries !== null) {
                    $this->file($handle, $handle->stderrEntries->flush());
                }
            }
        }
    }

    /**
     * The worker was reaped: what it wrote last is filed. A process it started that is still running may hold the
     * pipe (a program run in the background with its standard error not redirected): the pipe stays open and is
     * read on until that process closes it, so it can neither block on a full pipe nor die of SIGPIPE (up to
     * MAX_LINGERING such pipes; past that the oldest is closed and what its holder writes then is lost to it).
     */
    public function reaped(WorkerHandle $handle): void
    {
        $this->read($handle);
        if (!\is_resource($handle->stderr)) {
            return;
        }
        $this->lingering[++$this->lastKey] = $handle;
        if (\count($this->lingering) > self::MAX_LINGERING) {
            $oldest = (int) array_key_first($this->lingering);
            $this->close($this->lingering[$oldest]);
            unset($this->lingering[$oldest]);
        }
    }

    /** @return array<string, resource> the pipes of exited workers still held open, for the supervisor's select */
    public function lingering(): array
    {
        $streams = [];
        foreach ($this->lingering as $key => $handle) {
            if (\is_resource($handle->stderr)) {
                $streams["l$key"] = $handle->stderr;
            }
        }
        return $streams;
    }

    /** A pipe of lingering() was readable. */
    public function readLingering(string $key): void
    {
        $id = (int) substr($key, 1);
        $handle = $this->lingering[$id] ?? null;
        if ($handle === null) {
            return;
        }
        $this->read($handle);
        if (!\is_resource($handle->stderr)) {
            unset($this->lingering[$id]);
        }
    }

    /** In a process forked from the supervisor: the lingering pipes are not its own. */
    public function forgetInChild(): void
    {
        foreach ($this->lingering as $handle) {
            $handle->closeStderr();
        }
        $this->lingering = [];
        $this->holding = [];
    }

    private function close(WorkerHandle $handle): void
    {
        unset($this->holding[spl_object_id($handle)]);
        if ($handle->stderrEntries !== null) {
            $this->file($handle, $handle->stderrEntries->finish());
        }
        $handle->closeStderr();
    }

    /** @param list<array{string, string}> $entries */
    private function file(WorkerHandle $handle, array $entries): void
    {
        foreach ($entries as [$level, $message]) {
            $this->log->logAs("worker {$handle->slot}", $handle->pid, $level, $message);
        }
    }
}
