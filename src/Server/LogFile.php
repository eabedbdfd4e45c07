<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * An append-only log destination shared by every process of the server: a file opened in append mode
 * (or php://stderr). Each write() is one fwrite() of whole lines, so lines from several processes
 * never interleave mid-line. reopen() lets logrotate move the file away (USR1).
 */
final class LogFile
{
    /** @var resource|null */
    private mixed $handle = null;

    /**
     * Standard error (fd 2) is this file too (a daemon's error log): PHP's own messages (warnings and fatal errors of
     * scripts and handlers, which PHP writes to stderr) land here, and reopen() moves fd 2 to the new file as well.
     */
    private bool $carriesStderr = false;

    public function __construct(public readonly string $path) {}

    public static function stderr(): self
    {
        return new self('php://stderr');
    }

    public function isStderr(): bool
    {
        return $this->path === 'php://stderr';
    }

    /** Opens the file now, so a bad path fails at start-up rather than at the first line. */
    public function open(): void
    {
        if ($this->handle !== null) {
            return;
        }
        $handle = @fopen($this->path, 'a');
        if ($handle === false) {
            $reason = error_get_last()['message'] ?? 'unknown error';
            throw new ServerException("Cannot open log file {$this->path}: $reason");
        }
        $this->handle = $handle;
    }

    public function write(string $lines): void
    {
        if ($this->handle === null) {
            try {
                $this->open();
            } catch (ServerException) {
                return; // Nowhere left to report it; never let logging take a worker down.
            }
        }
        if ($this->handle !== null) {
            @fwrite($this->handle, $lines);
        }
    }

    public function reopen(): void
    {
        if ($this->isStderr()) {
            return;
        }
        if ($this->handle !== null) {
            @fclose($this->handle);
            $this->handle = null;
        }
        $this->open();
        if ($this->carriesStderr) {
            StandardError::appendTo($this->path);
        }
    }

    /** Says that fd 2 was pointed at this file (Daemon::detach()), so that reopen() moves it too. */
    public function carryStderr(): void
    {
        $this->carriesStderr = !$this->isStderr();
    }

    /** In a worker whose fd 2 is the supervisor's pipe (StderrRelay): reopen() leaves fd 2 where it is. */
    public function releaseStderr(): void
    {
        $this->carriesStderr = false;
    }

    public function close(): void
    {
        if ($this->handle !== null && !$this->isStderr()) {
            @fclose($this->handle);
        }
        $this->handle = null;
    }
}
