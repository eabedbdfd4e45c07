<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Loop\Loop;

/**
 * Files a stream of standard error in the error log as it arrives, on the event loop: cut into entries by
 * StderrEntries, and a message held open for the rest of its trace filed once the stream has been quiet for
 * StderrRelay::QUIET_SECONDS. For the PHP processes a worker reads itself: the fork tier's children (through the
 * fork server) and the isolated tier's php-cgi children (one filer a request, over FastCGI).
 */
final class StderrFiler
{
    private readonly StderrEntries $entries;

    private ?string $quiet = null;

    /** @param \Closure(string, string): void $sink called with each entry's level (a LogLevel value) and message */
    public function __construct(private readonly \Closure $sink)
    {
        $this->entries = new StderrEntries();
    }

    public function write(string $bytes): void
    {
        if ($this->quiet !== null) {
            Loop::cancel($this->quiet);
            $this->quiet = null;
        }
        $this->file($this->entries->feed($bytes));
        if ($this->entries->holding()) {
            $this->quiet = Loop::delay(StderrRelay::QUIET_SECONDS, function (): void {
                $this->quiet = null;
                $this->file($this->entries->flush());
            });
        }
    }

    /** The stream ended: what is held open and what is left without a newline is filed now. */
    public function end(): void
    {
        if ($this->quiet !== null) {
            Loop::cancel($this->quiet);
            $this->quiet = null;
        }
        $this->file($this->entries->finish());
    }

    /** @param list<array{string, string}> $entries */
    private function file(array $entries): void
    {
        foreach ($entries as [$level, $message]) {
            ($this->sink)($level, $message);
        }
    }
}
