<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Server\LogFile;

/**
 * Access log in the combined format (as Apache's and nginx's default). Lines are gathered and written
 * in one append per flush — at most every second (the server's housekeeping tick) or every 64 KiB — so
 * logging costs no system call per request.
 */
final class AccessLog
{
    private string $pending = '';

    private int $stampSecond = 0;

    private string $stamp = '';

    public function __construct(
        private readonly LogFile $file,
        private readonly int $flushBytes = 65536,
    ) {}

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
