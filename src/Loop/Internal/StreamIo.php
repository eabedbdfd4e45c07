<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

use function Kiln\Loop\awaitReadable;
use function Kiln\Loop\awaitWritable;

use Kiln\Loop\Cancellation;
use Kiln\Loop\StreamException;

/**
 * Non-blocking reads and writes that suspend the calling Fiber (or run the loop, in {main}) instead
 * of blocking the worker. The stream is switched to non-blocking mode on each call.
 *
 * @internal Use the functions read(), readAll(), readLine() and write().
 */
final class StreamIo
{
    /** @param resource $stream */
    public static function read(mixed $stream, int $max, ?Cancellation $cancellation): ?string
    {
        if ($max < 1) {
            throw new \ValueError("read() needs max >= 1, got $max");
        }
        self::prepare($stream);
        while (true) {
            $chunk = @\fread($stream, $max);
            if ($chunk === false) {
                throw new StreamException('Reading failed: ' . (\error_get_last()['message'] ?? 'unknown error'));
            }
            if ($chunk !== '') {
                return $chunk;
            }
            if (\feof($stream)) {
                return null;
            }
            awaitReadable($stream, $cancellation);
        }
    }

    /** @param resource $stream */
    public static function readAll(mixed $stream, ?Cancellation $cancellation): string
    {
        $data = '';
        while (($chunk = self::read($stream, 65536, $cancellation)) !== null) {
            $data .= $chunk;
        }

        return $data;
    }

    /**
     * Up to "\n" (or "\r\n"), which is stripped. PHP's own stream buffer holds what was read past the
     * line, so mixing readLine() with read() on one stream is safe.
     *
     * @param resource $stream
     */
    public static function readLine(mixed $stream, int $maxLength, ?Cancellation $cancellation): ?string
    {
        if ($maxLength < 1) {
            throw new \ValueError("readLine() needs maxLength >= 1, got $maxLength");
        }
        self::prepare($stream);
        $line = '';
        while (true) {
            $part = @\fgets($stream, \max(2, $maxLength - \strlen($line) + 1));
            if ($part !== false && $part !== '') {
                $line .= $part;
                if ($line[-1] === "\n") {
                    return \substr($line, 0, \str_ends_with($line, "\r\n") ? -2 : -1);
                }
                if (\strlen($line) >= $maxLength) {
                    throw new StreamException("Line longer than $maxLength bytes");
                }
                continue;
            }
            if (\feof($stream)) {
                return $line === '' ? null : $line;
            }
            awaitReadable($stream, $cancellation);
        }
    }

    /** @param resource $stream */
    public static function write(mixed $stream, string $data, ?Cancellation $cancellation): void
    {
        self::prepare($stream);
        while ($data !== '') {
            $written = @\fwrite($stream, $data);
            if ($written === false) {
                throw new StreamException('Writing failed: ' . (\error_get_last()['message'] ?? 'unknown error'));
            }
            $data = \substr($data, $written);
            if ($data !== '') {
                awaitWritable($stream, $cancellation);
            }
        }
    }

    /** @param resource $stream */
    private static function prepare(mixed $stream): void
    {
        if (!\is_resource($stream)) {
            throw new StreamException('The stream is closed');
        }
        \stream_set_blocking($stream, false);
    }
}
