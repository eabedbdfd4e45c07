<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * Bytes waiting for a non-blocking stream, bounded: push() refuses what would pass the limit, writeTo()
 * writes what the stream takes now. Chunks are kept as given (a 1 MiB frame is not copied into one growing
 * string); small ones are joined for one write.
 */
final class WriteQueue
{
    private const JOIN = 65536;

    /** @var array<int, string> keys $first .. $next - 1 */
    private array $chunks = [];

    private int $first = 0;

    private int $next = 0;

    /** Bytes of the first chunk already written. */
    private int $offset = 0;

    private int $bytes = 0;

    public function __construct(public readonly int $limit)
    {
        if ($limit < 1) {
            throw new \ValueError('A write queue holds at least one byte');
        }
    }

    /** False (and nothing queued) when $data would take the queue past its limit. */
    public function push(string $data): bool
    {
        if ($this->bytes + \strlen($data) > $this->limit) {
            return false;
        }
        if ($data !== '') {
            $this->chunks[$this->next++] = $data;
            $this->bytes += \strlen($data);
        }
        return true;
    }

    /** Bytes not written yet. */
    public function size(): int
    {
        return $this->bytes;
    }

    public function isEmpty(): bool
    {
        return $this->bytes === 0;
    }

    public function clear(): void
    {
        $this->chunks = [];
        $this->first = $this->next = $this->offset = $this->bytes = 0;
    }

    /**
     * Writes until the stream takes no more (or the queue is empty).
     *
     * @param resource $stream non-blocking
     * @return bool false when the stream is broken (the peer closed it)
     */
    public function writeTo(mixed $stream): bool
    {
        while ($this->chunks !== []) {
            $data = $this->head();
            $written = @fwrite($stream, $data);
            if ($written === false) {
                return false;
            }
            $this->consume($written);
            if ($written < \strlen($data)) {
                return true;
            }
        }
        return true;
    }

    private function head(): string
    {
        $head = $this->chunks[$this->first];
        $head = $this->offset === 0 ? $head : substr($head, $this->offset);
        if (\strlen($head) >= self::JOIN) {
            return $head;
        }
        for ($i = $this->first + 1; $i < $this->next && \strlen($head) + \strlen($this->chunks[$i]) <= self::JOIN; $i++) {
            $head .= $this->chunks[$i];
        }
        return $head;
    }

    private function consume(int $written): void
    {
        $this->bytes -= $written;
        while ($written > 0) {
            $left = \strlen($this->chunks[$this->first]) - $this->offset;
            if ($written < $left) {
                $this->offset += $written;
                return;
            }
            $written -= $left;
            unset($this->chunks[$this->first++]);
            $this->offset = 0;
        }
    }
}
