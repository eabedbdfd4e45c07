<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The supervisor's read end of one process's standard error (StderrRelay): a worker's, a task worker's or a user
 * process's, with the label and pid its entries are filed under and the message it may be holding open.
 */
final class StderrSource
{
    public readonly StderrEntries $entries;

    /** @var resource|null the pipe's read end; null once closed */
    private mixed $stream;

    /** @param resource $stream the pipe's read end */
    public function __construct(
        public readonly string $label,
        public readonly int $pid,
        mixed $stream,
    ) {
        $this->stream = $stream;
        $this->entries = new StderrEntries();
    }

    /** @return resource|null null once closed */
    public function stream(): mixed
    {
        return \is_resource($this->stream) ? $this->stream : null;
    }

    public function close(): void
    {
        if (\is_resource($this->stream)) {
            fclose($this->stream);
        }
        $this->stream = null;
    }
}
