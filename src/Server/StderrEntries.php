<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * What a PHP process writes to its standard error, cut into error-log entries (no I/O: the reader feeds it what
 * it read): a worker's, read by the supervisor (StderrRelay), and the fork tier's children's, read by the fork server. PHP writes each of its messages as one write ending in a newline ("PHP Warning:  … on line 3");
 * an uncaught exception's message spans lines ("Stack trace:", "#0 …", "  thrown in …"), kept as one entry
 * when they come in one read. Each entry gets a level from PHP's own prefix (LogLevel::ofPhpMessage()).
 * Blank lines are no entries. A line still without its newline is held up to MAX_ENTRY bytes, then written in
 * entries of that size: nothing is dropped, and the holding is bounded.
 */
final class StderrEntries
{
    public const MAX_ENTRY = 65536;

    /** A line that goes on the entry before it: part of a stack trace or of a chained exception. */
    private const CONTINUATION = '/^(?:[ \t]|#\d|Stack trace:|Next |\{main\})/';

    private string $partial = '';

    /**
     * The entries made whole by $bytes.
     *
     * @return list<array{string, string}> level (a LogLevel value) and message, without its final newline
     */
    public function feed(string $bytes): array
    {
        $this->partial .= $bytes;
        $end = strrpos($this->partial, "\n");
        if ($end === false) {
            return \strlen($this->partial) >= self::MAX_ENTRY ? $this->cut() : [];
        }
        $lines = explode("\n", substr($this->partial, 0, $end));
        $this->partial = (string) substr($this->partial, $end + 1);
        $entries = [];
        $message = null;
        foreach ($lines as $line) {
            $line = rtrim($line, "\r");
            // A blank line goes on too: PHP puts one before the "Next …" of a chained exception.
            if ($message !== null && ($line === '' || preg_match(self::CONTINUATION, $line) === 1)
                && \strlen($message) + \strlen($line) < self::MAX_ENTRY) {
                $message .= "\n" . $line;
                continue;
            }
            $message !== null && self::add($entries, $message);
            $message = $line;
        }
        self::add($entries, $message); // explode() gave at least one line
        return \strlen($this->partial) >= self::MAX_ENTRY ? [...$entries, ...$this->cut()] : $entries;
    }

    /**
     * What is left without a final newline (the worker ended): one last entry, or none.
     *
     * @return list<array{string, string}>
     */
    public function finish(): array
    {
        $message = rtrim($this->partial, "\r");
        $this->partial = '';
        return trim($message) === '' ? [] : [[LogLevel::ofPhpMessage($message)->value, $message]];
    }

    /** @param list<array{string, string}> $entries */
    private static function add(array &$entries, string $message): void
    {
        $message = trim($message, "\n");
        if (trim($message) !== '') {
            $entries[] = [LogLevel::ofPhpMessage($message)->value, $message];
        }
    }

    /** @return list<array{string, string}> the partial line in entries of MAX_ENTRY bytes, the rest kept */
    private function cut(): array
    {
        $entries = [];
        while (\strlen($this->partial) >= self::MAX_ENTRY) {
            $message = substr($this->partial, 0, self::MAX_ENTRY);
            $this->partial = (string) substr($this->partial, self::MAX_ENTRY);
            $entries[] = [LogLevel::ofPhpMessage($message)->value, $message];
        }
        return $entries;
    }
}
