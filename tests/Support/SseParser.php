<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * Reads a `text/event-stream` back as a browser's EventSource does (WHATWG HTML, "Interpreting an event
 * stream"), resumable: feed() any split of the bytes, one byte at a time included. What it reads is kept
 * in events() (dispatched events: type, data, last event id), comments() and retry().
 */
final class SseParser
{
    private string $line = '';

    /** The previous byte was a CR: an LF right after it belongs to the same line end. */
    private bool $afterCr = false;

    private string $data = '';

    private bool $hasData = false;

    private string $type = '';

    private string $lastEventId = '';

    private ?int $retry = null;

    /** @var list<array{event: string, data: string, id: string}> */
    private array $events = [];

    /** @var list<string> */
    private array $comments = [];

    public function feed(string $bytes): void
    {
        $length = \strlen($bytes);
        for ($i = 0; $i < $length; $i++) {
            $byte = $bytes[$i];
            if ($this->afterCr) {
                $this->afterCr = false;
                if ($byte === "\n") {
                    continue;
                }
            }
            if ($byte === "\r" || $byte === "\n") {
                $this->afterCr = $byte === "\r";
                $line = $this->line;
                $this->line = '';
                $this->processLine($line);
                continue;
            }
            $this->line .= $byte;
        }
    }

    /** @return list<array{event: string, data: string, id: string}> */
    public function events(): array
    {
        return $this->events;
    }

    /** @return list<string> */
    public function comments(): array
    {
        return $this->comments;
    }

    public function retry(): ?int
    {
        return $this->retry;
    }

    /** Whether bytes of an unfinished line or event are waiting (a well-framed stream leaves none). */
    public function isBetweenEvents(): bool
    {
        return $this->line === '' && !$this->hasData && $this->type === '';
    }

    private function processLine(string $line): void
    {
        if ($line === '') {
            $this->dispatch();
            return;
        }
        if ($line[0] === ':') {
            $this->comments[] = ltrim(substr($line, 1), ' ');
            return;
        }
        $colon = strpos($line, ':');
        $field = $colon === false ? $line : substr($line, 0, $colon);
        $value = $colon === false ? '' : substr($line, $colon + 1);
        if (str_starts_with($value, ' ')) {
            $value = substr($value, 1);
        }
        match ($field) {
            'event' => $this->type = $value,
            'data' => $this->appendData($value),
            'id' => str_contains($value, "\0") ? null : $this->lastEventId = $value,
            'retry' => preg_match('/^\d+$/D', $value) === 1 ? $this->retry = (int) $value : null,
            default => null,
        };
    }

    private function appendData(string $value): void
    {
        $this->data .= $value . "\n";
        $this->hasData = true;
    }

    private function dispatch(): void
    {
        if (!$this->hasData) {
            $this->type = '';
            return;
        }
        $this->events[] = ['event' => $this->type === '' ? 'message' : $this->type, 'data' => substr($this->data, 0, -1), 'id' => $this->lastEventId];
        $this->data = '';
        $this->hasData = false;
        $this->type = '';
    }
}
