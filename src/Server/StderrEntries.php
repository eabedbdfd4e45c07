<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * What a PHP process writes to its standard error, cut into error-log entries (no I/O: the reader feeds it what
 * it read): a worker's, read by the supervisor (StderrRelay), and the fork tier's children's, read by the fork server.
 *
 * PHP writes each message ending in a newline ("PHP Warning:  … on line 3"), in pieces of 8 KiB when it is long.
 * An uncaught exception's message spans lines ("Stack trace:", "#0 …", "  thrown in …", a blank line and "Next …"
 * for a chained one): they stay one entry, whatever the reads that brought them. So the last message read is held
 * open until a line that starts another arrives, or the reader calls flush() (the pipe stayed quiet for a moment)
 * or finish() (it ended). Lines join only an entry that begins with PHP's "PHP " prefix. Each entry gets a level
 * from that prefix (LogLevel::ofPhpMessage()); blank lines are no entries. No entry is longer than MAX_ENTRY bytes:
 * a longer line, or a line still without its newline past that size, is filed in pieces; nothing is dropped.
 */
final class StderrEntries
{
    public const MAX_ENTRY = 65536;

    /** A line that goes on a PHP message before it: part of its stack trace. */
    private const CONTINUATION = '/^(?:[ \t]|#\d|Stack trace:|\{main\})/';

    /** A line without its newline yet. */
    private string $partial = '';

    /** The last message, held open for the lines that may continue it; null: none. */
    private ?string $open = null;

    /** The open message ended on a blank line (which only a chained exception's "Next …" continues). */
    private bool $blank = false;

    /**
     * The entries made whole by $bytes (the last message stays open: see flush()).
     *
     * @return list<array{string, string}> level (a LogLevel value) and message, without its final newline
     */
    public function feed(string $bytes): array
    {
        $this->partial .= $bytes;
        $entries = [];
        $end = strrpos($this->partial, "\n");
        if ($end !== false) {
            $lines = explode("\n", substr($this->partial, 0, $end));
            $this->partial = (string) substr($this->partial, $end + 1);
            foreach ($lines as $line) {
                $this->line(rtrim($line, "\r"), $entries);
            }
        }
        if (\strlen($this->partial) >= self::MAX_ENTRY) {
            $this->close($entries);
            while (\strlen($this->partial) >= self::MAX_ENTRY) {
                self::add($entries, substr($this->partial, 0, self::MAX_ENTRY));
                $this->partial = (string) substr($this->partial, self::MAX_ENTRY);
            }
        }
        return $entries;
    }

    /**
     * The message held open, now taken as whole (nothing came to continue it).
     *
     * @return list<array{string, string}>
     */
    public function flush(): array
    {
        $entries = [];
        $this->close($entries);
        return $entries;
    }

    /** Whether a message is held open (flush() would give it). */
    public function holding(): bool
    {
        return $this->open !== null;
    }

    /**
     * The stream ended: the message held open and what is left without a final newline.
     *
     * @return list<array{string, string}>
     */
    public function finish(): array
    {
        $entries = $this->flush();
        self::add($entries, rtrim($this->partial, "\r"));
        $this->partial = '';
        return $entries;
    }

    /** @param list<array{string, string}> $entries */
    private function line(string $line, array &$entries): void
    {
        if ($this->open !== null) {
            if ($line === '') {
                $this->blank = true;
                return;
            }
            $continues = $this->blank ? str_starts_with($line, 'Next ') : preg_match(self::CONTINUATION, $line) === 1;
            if ($continues && \strlen($this->open) + \strlen($line) + 2 < self::MAX_ENTRY) {
                $this->open .= ($this->blank ? "\n\n" : "\n") . $line;
                $this->blank = false;
                return;
            }
            $this->close($entries);
        }
        if (\strlen($line) >= self::MAX_ENTRY) {
            foreach (str_split($line, self::MAX_ENTRY) as $piece) {
                self::add($entries, $piece);
            }
            return;
        }
        if (str_starts_with($line, 'PHP ')) {
            $this->open = $line; // a trace may follow
            return;
        }
        self::add($entries, $line);
    }

    /** @param list<array{string, string}> $entries */
    private function close(array &$entries): void
    {
        if ($this->open !== null) {
            self::add($entries, $this->open);
            $this->open = null;
            $this->blank = false;
        }
    }

    /** @param list<array{string, string}> $entries */
    private static function add(array &$entries, string $message): void
    {
        if (trim($message) !== '') {
            $entries[] = [LogLevel::ofPhpMessage($message)->value, $message];
        }
    }
}
