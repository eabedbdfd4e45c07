<?php

declare(strict_types=1);

namespace Kiln\Http\Sse;

/**
 * Server-sent events (the WHATWG `text/event-stream` format), sans-I/O: values in, bytes out.
 *
 * An event is its fields, one per line, then an empty line: `event`, `id` and `retry` once each when
 * given, then one `data:` line per line of the data (split on CRLF, CR and LF, as a client splits
 * them, so the client reads back the same text with its line breaks as LF). A value that would end its
 * line early (CR or LF in an event name, an id or a comment; NUL in an id, which clients ignore) is refused
 * with \ValueError rather than sent as a different event.
 */
final class EventEncoder
{
    /** What a stream sends when it has been quiet for a while: a comment, which clients ignore. */
    public const HEARTBEAT = ": heartbeat\n\n";

    public static function event(string $data, ?string $event = null, ?string $id = null, ?int $retry = null): string
    {
        $bytes = '';
        if ($event !== null) {
            self::check('event name', $event, "\r\n");
            if ($event === '') {
                throw new \ValueError('An SSE event name cannot be empty: pass null for the default "message"');
            }
            $bytes .= "event: $event\n";
        }
        if ($id !== null) {
            self::check('event id', $id, "\r\n\0");
            $bytes .= "id: $id\n";
        }
        if ($retry !== null) {
            $bytes .= self::retryLine($retry);
        }
        if (strpbrk($data, "\r\n") === false) {
            return $bytes . "data: $data\n\n";
        }
        foreach (preg_split('/\r\n|\r|\n/', $data) ?: [] as $line) {
            $bytes .= "data: $line\n";
        }
        return $bytes . "\n";
    }

    /** A comment line (`: text`): clients ignore it; proxies see traffic. */
    public static function comment(string $text): string
    {
        self::check('comment', $text, "\r\n");
        return $text === '' ? ":\n" : ": $text\n";
    }

    /** Tells the client how long to wait before reconnecting (milliseconds), without an event. */
    public static function retry(int $milliseconds): string
    {
        return self::retryLine($milliseconds) . "\n";
    }

    private static function retryLine(int $milliseconds): string
    {
        if ($milliseconds < 0) {
            throw new \ValueError("An SSE retry time is milliseconds ≥ 0, got $milliseconds");
        }
        return "retry: $milliseconds\n";
    }

    private static function check(string $what, string $value, string $forbidden): void
    {
        if (strpbrk($value, $forbidden) !== false) {
            throw new \ValueError("An SSE $what cannot hold CR, LF" . (str_contains($forbidden, "\0") ? ' or NUL' : '')
                . ': it would end the field early; got "' . addcslashes($value, "\0..\37\\\"") . '"');
        }
    }
}
