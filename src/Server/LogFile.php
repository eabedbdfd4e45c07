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
    }

    public function close(): void
    {
        if ($this->handle !== null && !$this->isStderr()) {
            @fclose($this->handle);
        }
        $this->handle = null;
    }
}
