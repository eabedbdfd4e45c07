<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Event;

/** One row of the current result set, typed (MysqlTypes). */
final class Row
{
    /** @param array<string, mixed> $values */
    public function __construct(public readonly array $values) {}
}
