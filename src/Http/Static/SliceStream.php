<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * A read-only stream made of literal strings and slices of an open file, with a known size: the body of
 * a 206 (one slice) or of a multipart/byteranges reply (part headers between slices).
 *
 * Why a stream wrapper: the server sends a stream body whose fstat() says "regular file of N bytes"
 * with Content-Length N, in 64 KiB pieces, waiting for the socket to drain between pieces; an iterable
 * body would go out chunked instead. Presenting the slices as such a stream gets an exact
 * Content-Length (HTTP/1.0 clients and download managers want it) and the server's backpressure,
 * reading at most one piece of the file at a time, without touching the connection code.
 *
 * @internal
 */
final class SliceStream
{
    public const PROTOCOL = 'kiln-slices';

    private const PIECE = 65536;

    /** @var resource|null set by PHP for stream wrappers */
    public $context;

    /** @var resource|null */
    private $file = null;

    /** @var list<string|array{int, int}> */
    private array $segments = [];

    private int $segment = 0;

    private int $offset = 0;

    private int $size = 0;

    /**
     * @param resource $file an open, seekable file; the stream owns it from now on (closed with it)
     * @param list<string|array{int, int}> $segments literal bytes, or [offset, length] of $file
     * @return resource
     */
    public static function open(mixed $file, array $segments): mixed
    {
        if (!\in_array(self::PROTOCOL, stream_get_wrappers(), true)) {
            stream_wrapper_register(self::PROTOCOL, self::class);
        }
        $context = stream_context_create([self::PROTOCOL => ['file' => $file, 'segments' => $segments]]);
        $stream = fopen(self::PROTOCOL . '://body', 'rb', false, $context);
        if ($stream === false) {
            throw new \Error('Cannot open a ' . self::PROTOCOL . ' stream');
        }
        stream_set_chunk_size($stream, self::PIECE);
        return $stream;
    }

    /**
     * The number of bytes the segments make.
     *
     * @param list<string|array{int, int}> $segments
     */
    public static function sizeOf(array $segments): int
    {
        $size = 0;
        foreach ($segments as $segment) {
            $size += \is_string($segment) ? \strlen($segment) : $segment[1];
        }
        return $size;
    }

    public function stream_open(string $path, string $mode, int $options, ?string &$openedPath): bool
    {
        $options = $this->context === null ? [] : stream_context_get_options($this->context);
        $mine = $options[self::PROTOCOL] ?? null;
        $file = \is_array($mine) ? $mine['file'] ?? null : null;
        $segments = \is_array($mine) ? $mine['segments'] ?? null : null;
        if (!\is_resource($file) || !\is_array($segments) || $mode !== 'rb') {
            return false;
        }
        $this->file = $file;
        /** @var list<string|array{int, int}> $segments */
        $this->segments = $segments;
        $this->size = self::sizeOf($segments);
        return true;
    }

    public function stream_read(int $count): string|false
    {
        while (isset($this->segments[$this->segment])) {
            $segment = $this->segments[$this->segment];
            $length = \is_string($segment) ? \strlen($segment) : $segment[1];
            $left = $length - $this->offset;
            if ($left <= 0) {
                $this->segment++;
                $this->offset = 0;
                continue;
            }
            $want = max(1, min($count, $left, self::PIECE));
            if (\is_string($segment)) {
                $bytes = substr($segment, $this->offset, $want);
            } elseif ($this->file === null || fseek($this->file, $segment[0] + $this->offset) !== 0) {
                return false;
            } else {
                $bytes = fread($this->file, $want);
                if ($bytes === false || $bytes === '') {
                    return ''; // the file shrank: the reader sees the end early and gives up the message
                }
            }
            $this->offset += \strlen($bytes);
            return $bytes;
        }
        return '';
    }

    public function stream_eof(): bool
    {
        return !isset($this->segments[$this->segment]);
    }

    /** @return array<string, int> a regular file of the segments' size, as the sender wants */
    public function stream_stat(): array
    {
        return ['mode' => 0100444, 'size' => $this->size];
    }

    public function stream_close(): void
    {
        if (\is_resource($this->file)) {
            fclose($this->file);
        }
        $this->file = null;
    }

    public function __destruct()
    {
        $this->stream_close();
    }
}
