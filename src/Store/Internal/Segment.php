<?php

declare(strict_types=1);

namespace Kiln\Store\Internal;

/**
 * A block of bytes that every process of the node maps or opens by name, with one node-wide lock.
 * Fresh bytes read as zero. Each process MUST get its own lock (a descriptor inherited through fork
 * shares the lock with the parent, so an implementation reopens after fork).
 *
 * @internal
 */
interface Segment
{
    /**
     * Called with the lock held (lock() works before open()). Attaches to the segment, creating it with
     * $size bytes when it does not exist yet; returns its size (an existing one keeps its own).
     */
    public function open(int $size): int;

    public function read(int $offset, int $length): string;

    public function write(int $offset, string $data): void;

    /** Blocks until this process holds the node-wide lock. Not re-entrant. */
    public function lock(): void;

    public function unlock(): void;

    /** Removes the segment from the system (processes that have it open keep their view). */
    public function remove(): void;
}
