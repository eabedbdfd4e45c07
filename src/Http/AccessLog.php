<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Loop\Loop;
use Kiln\Server\LogFile;

/**
 * Access log in the combined format (as Apache's and nginx's default) or as JSON lines (AccessLogFormat). A line is recorded when its
 * response ends and written at the end of that turn of the event loop, with every other line of the same
 * turn, in one append (or at once past 64 KiB): a line is in the file before the worker reads anything
 * more, and a busy worker, which ends many responses per turn, still makes one write for all of them.
 */
final class AccessLog
{
    private string $pending = '';

    private int $stampSecond = 0;

    private string $stamp = '';

    /** flush(), for Loop::defer() (made once). */
    private readonly \Closure $flushLater;

    public function __construct(
        private readonly LogFile $file,
        private readonly int $flushBytes = 65536,
        private readonly AccessLogFormat $format = AccessLogFormat::Combined,
    ) {
        $this->flushLater = function (): void {
            $this->flush();
        };
    }

    /** Whether record() wants the duration (the JSON format): a request's start is then taken. */
    public function timed(): bool
    {
        return $this->format === AccessLogFormat::Json;
    }

    public function record(
        string $remoteAddress,
        string $requestLine,
        int $status,
        int $bytes,
        string $referer,
        string $userAgent,
        float $duration = 0.0,
        string $requestId = '',
        string $tier = '',
        int $worker = 0,
    ): void {
        if ($this->pending === '') {
            Loop::defer($this->flushLater); // written once this turn's responses are all ended
        }
        if ($this->format === AccessLogFormat::Json) {
            $this->recordJson($remoteAddress, $requestLine, $status, $bytes, $duration, $requestId, $tier, $worker);
            return;
        }
        $now = time();
        if ($now !== $this->stampSecond) {
            $this->stampSecond = $now;
            $this->stamp = date('d/M/Y:H:i:s O', $now);
        }
        $this->pending .= $remoteAddress . ' - - [' . $this->stamp . '] "' . self::escape($requestLine) . '" '
            . $status . ' ' . ($bytes > 0 ? $bytes : '-') . ' "' . self::escape($referer !== '' ? $referer : '-')
            . '" "' . self::escape($userAgent !== '' ? $userAgent : '-') . "\"\n";
        if (\strlen($this->pending) >= $this->flushBytes) {
            $this->flush();
        }
    }

    private function recordJson(string $client, string $requestLine, int $status, int $bytes, float $duration, string $requestId, string $tier, int $worker): void
    {
        [$method, $path] = explode(' ', $requestLine . ' -', 3);
        $this->pending .= json_encode([
            'time' => self::isoTime(microtime(true)),
            'method' => $method,
            'path' => $path,
            'status' => $status,
            'bytes' => $bytes,
            'duration' => round($duration, 6),
            'client' => $client,
            'request_id' => $requestId,
            'tier' => $tier,
            'worker' => $worker,
        ], JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PRESERVE_ZERO_FRACTION) . "\n";
        if (\strlen($this->pending) >= $this->flushBytes) {
            $this->flush();
        }
    }

    private static function isoTime(float $now): string
    {
        return date('Y-m-d\TH:i:s', (int) $now) . sprintf('.%03d', (int) (fmod($now, 1.0) * 1000)) . date('P', (int) $now);
    }

    public function flush(): void
    {
        if ($this->pending !== '') {
            $this->file->write($this->pending);
            $this->pending = '';
        }
    }

    private static function escape(string $value): string
    {
        // Quotes, backslashes and control bytes would let a client forge log lines.
        return addcslashes($value, "\"\\\x00..\x1f\x7f");
    }
}
