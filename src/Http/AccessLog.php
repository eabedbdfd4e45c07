<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Loop\Loop;
use Kiln\Server\LogFile;

/**
 * Access log in the combined format (as Apache's and nginx's default). A line is recorded when its
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
    ) {
        $this->flushLater = function (): void {
            $this->flush();
        };
    }

    public function record(
        string $remoteAddress,
        string $requestLine,
        int $status,
        int $bytes,
        string $referer,
        string $userAgent,
    ): void {
        $now = time();
        if ($now !== $this->stampSecond) {
            $this->stampSecond = $now;
            $this->stamp = date('d/M/Y:H:i:s O', $now);
        }
        if ($this->pending === '') {
            Loop::defer($this->flushLater); // written once this turn's responses are all ended
        }
        $this->pending .= $remoteAddress . ' - - [' . $this->stamp . '] "' . self::escape($requestLine) . '" '
            . $status . ' ' . ($bytes > 0 ? $bytes : '-') . ' "' . self::escape($referer !== '' ? $referer : '-')
            . '" "' . self::escape($userAgent !== '' ? $userAgent : '-') . "\"\n";
        if (\strlen($this->pending) >= $this->flushBytes) {
            $this->flush();
        }
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
