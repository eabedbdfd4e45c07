<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Event;

use Kiln\Db\Mysql\Column;

/** COM_STMT_PREPARE succeeded: the statement's id, how many parameters it takes, and its columns. */
final class Prepared
{
    /** @param list<Column> $columns */
    public function __construct(
        public readonly int $id,
        public readonly int $paramCount,
        public readonly array $columns,
    ) {}
}
