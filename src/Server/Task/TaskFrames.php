<?php

declare(strict_types=1);

namespace Kiln\Server\Task;

/**
 * The task socket's framing, sans-I/O: each frame is a 4-byte big-endian length and that many bytes.
 * feed() takes bytes as they come; next() gives whole frames in order (null: more bytes needed).
 *
 * On a connection: the task worker sends one frame with its pid as it takes the call, the caller one frame
 * with the call, the task worker one frame with the outcome (TaskCodec).
 */
final class TaskFrames
{
    public const MAX_FRAME = 64 << 20;

    private string $buffer = '';

    public function __construct(private readonly int $maxFrame = self::MAX_FRAME) {}

    public static function encode(string $payload): string
    {
        if (\strlen($payload) > self::MAX_FRAME) {
            throw new \ValueError('A task call or result is limited to ' . (self::MAX_FRAME >> 20) . ' MiB serialized, got ' . \strlen($payload) . ' bytes');
        }
        return pack('N', \strlen($payload)) . $payload;
    }

    public function feed(string $bytes): void
    {
        $this->buffer .= $bytes;
    }

    /** @throws TaskException when a frame announces more than the limit */
    public function next(): ?string
    {
        if (\strlen($this->buffer) < 4) {
            return null;
        }
        $length = unpack('N', $this->buffer)[1] ?? 0;
        \assert(\is_int($length));
        if ($length > $this->maxFrame) {
            throw new TaskException("A task frame of $length bytes is over the limit of {$this->maxFrame}");
        }
        if (\strlen($this->buffer) < 4 + $length) {
            return null;
        }
        $frame = substr($this->buffer, 4, $length);
        $this->buffer = (string) substr($this->buffer, 4 + $length);
        return $frame;
    }

    /** Bytes fed and not yet returned as a frame. */
    public function pending(): int
    {
        return \strlen($this->buffer);
    }
}
