<?php

declare(strict_types=1);

namespace Kiln\Db;

/**
 * What a statement gave back: its rows (columns keyed by name, typed as Types describes), the rows it
 * changed, and the id it generated (MySQL's AUTO_INCREMENT; PostgreSQL has none: use RETURNING).
 *
 * @implements \IteratorAggregate<int, array<string, mixed>>
 */
final class Result implements \IteratorAggregate, \Countable
{
    /** @param list<array<string, mixed>> $rows */
    public function __construct(
        public readonly array $rows,
        public readonly int $affectedRows = 0,
        public readonly ?int $lastInsertId = null,
    ) {}

    /** @return array<string, mixed>|null */
    public function first(): ?array
    {
        return $this->rows[0] ?? null;
    }

    /** The first column of the first row, or null when there is no row. */
    public function scalar(): mixed
    {
        $row = $this->rows[0] ?? null;

        return $row === null ? null : ($row[\array_key_first($row)] ?? null);
    }

    public function count(): int
    {
        return \count($this->rows);
    }

    /** @return \ArrayIterator<int, array<string, mixed>> */
    public function getIterator(): \ArrayIterator
    {
        return new \ArrayIterator($this->rows);
    }
}
