<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Event;

use Kiln\Db\Mysql\Column;

/** A result set begins: its columns; Row events follow, then Done. */
final class ResultSet
{
    /** @param list<Column> $columns */
    public function __construct(public readonly array $columns) {}
}
