<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Server\Internal\StderrPipe;

/**
 * Files what workers, task workers, user processes and sidecars write to their standard error in the error log: each
 * one's fd 2 is a pipe the supervisor reads, and every message (PHP's warnings and fatal errors, error_log()
 * without an error_log setting, a script's fwrite(STDERR, …)) becomes an entry of the log's format
 * (--error-log-format), with its time, a level taken from PHP's prefix, and the process's label (`worker 1`,
 * `task worker 2`, `process mailer`, `php-cgi`) and pid. Without FFI they keep the server's standard error, where PHP's messages
 * appear in its own words (the supervisor's debug line says so).
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

    /** @var array<int, StderrSource> pipes of exited processes that another process still holds, by a key of their own */
    private array $lingering = [];

    /** @var array<int, StderrSource> pipes of the live processes forked beside the workers (follow()), by pid */
    private array $followed = [];

    /** @var array<int, array{StderrSource, float}> pipes holding an open message, by object id, with when they went quiet */
    private array $holding = [];

    private int $lastKey = 0;

    public function __construct(private readonly Log $log) {}

    /** Whether processes get the pipe (FFI is usable). */
    public static function supported(): bool
    {
        return StderrPipe::available();
    }

    /** A pipe for the process about to be forked; null: it keeps the server's standard error. */
    public function open(): ?StderrPipe
    {
        return StderrPipe::open();
    }

    /** In the process just forked. */
    public function adopt(StderrPipe $pipe): void
    {
        if ($pipe->becomeStderr()) {
            $this->log->file()->releaseStderr(); // a log rotation in the child must not take fd 2 back from the pipe
        }
    }

    /** In the supervisor once the worker is forked: the handle keeps the read end. */
    public function attach(WorkerHandle $handle, StderrPipe $pipe): void
    {
        $pipe->closeWriteEnd();
        $handle->stderr = new StderrSource("worker {$handle->slot}", $handle->pid, $pipe->reader);
    }

    /**
     * In the supervisor once a task worker, user process or sidecar is forked: its pipe is read beside the workers' (see
     * streams()) until released() says it was reaped.
     */
    public function follow(string $label, int $pid, StderrPipe $pipe): void
    {
        $pipe->closeWriteEnd();
        $this->followed[$pid] = new StderrSource($label, $pid, $pipe->reader);
    }

    /** A process of follow() was reaped: as reaped() for a worker. */
    public function released(int $pid): void
    {
        $source = $this->followed[$pid] ?? null;
        if ($source !== null) {
            unset($this->followed[$pid]);
            $this->reaped($source);
        }
    }

    /** Files what the process wrote (its pipe was readable); at EOF the pipe is closed. */
    public function read(StderrSource $source): void
    {
        $stream = $source->stream();
        if ($stream === null) {
            return;
        }
        // Up to 1 MiB a turn: a process filling its pipe without pause cannot keep the supervisor from the others.
        for ($read = 0; $read < 1_048_576; $read += \strlen($data)) {
            $data = @fread($stream, 65536);
            if ($data === false || $data === '') {
                if ($data === false || feof($stream)) {
                    $this->close($source);
                } elseif ($source->entries->holding()) {
                    $this->holding[spl_object_id($source)] = [$source, microtime(true)];
                }
                return;
            }
            $this->file($source, $source->entries->feed($data));
        }
        if ($source->entries->holding()) {
            $this->holding[spl_object_id($source)] = [$source, microtime(true)];
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
        foreach ($this->holding as $id => [$source, $since]) {
            if ($now - $since >= self::QUIET_SECONDS) {
                unset($this->holding[$id]);
                $this->file($source, $source->entries->flush());
            }
        }
    }

    /**
     * The process was reaped: what it wrote last is filed. A process it started that is still running may hold the
     * pipe (a program run in the background with its standard error not redirected): the pipe stays open and is
     * read on until that process closes it, so it can neither block on a full pipe nor die of SIGPIPE (up to
     * MAX_LINGERING such pipes; past that the oldest is closed and what its holder writes then is lost to it).
     */
    public function reaped(StderrSource $source): void
    {
        $this->read($source);
        if ($source->stream() === null) {
            return;
        }
        $this->lingering[++$this->lastKey] = $source;
        if (\count($this->lingering) > self::MAX_LINGERING) {
            $oldest = (int) array_key_first($this->lingering);
            $this->close($this->lingering[$oldest]);
            unset($this->lingering[$oldest]);
        }
    }

    /**
     * @return array<string, resource> for the supervisor's select, beside the workers' own: the pipes of follow()
     *     (keys `f…`) and those of exited processes still held open (`l…`); readStream() takes a readable one's key
     */
    public function streams(): array
    {
        $streams = [];
        foreach ($this->followed as $pid => $source) {
            $stream = $source->stream();
            if ($stream !== null) {
                $streams["f$pid"] = $stream;
            }
        }
        foreach ($this->lingering as $key => $source) {
            $stream = $source->stream();
            if ($stream !== null) {
                $streams["l$key"] = $stream;
            }
        }
        return $streams;
    }

    /** A pipe of streams() was readable. */
    public function readStream(string $key): void
    {
        $id = (int) substr($key, 1);
        if ($key[0] === 'f') {
            isset($this->followed[$id]) && $this->read($this->followed[$id]);
            return;
        }
        $source = $this->lingering[$id] ?? null;
        if ($source !== null) {
            $this->read($source);
            if ($source->stream() === null) {
                unset($this->lingering[$id]);
            }
        }
    }

    /** In a process forked from the supervisor: the pipes of other processes are not its own. */
    public function forgetInChild(): void
    {
        foreach ([...$this->lingering, ...$this->followed] as $source) {
            $source->close();
        }
        $this->lingering = [];
        $this->followed = [];
        $this->holding = [];
    }

    private function close(StderrSource $source): void
    {
        unset($this->holding[spl_object_id($source)]);
        $this->file($source, $source->entries->finish());
        $source->close();
    }

    /** @param list<array{string, string}> $entries */
    private function file(StderrSource $source, array $entries): void
    {
        foreach ($entries as [$level, $message]) {
            $this->log->logAs($source->label, $source->pid, $level, $message);
        }
    }
}
