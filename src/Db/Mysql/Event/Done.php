<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Event;

/**
 * A statement (or one result set of it) is finished. With $moreResults another result follows (a CALL, or
 * several statements in one query); otherwise the connection takes the next command.
 */
final class Done
{
    public function __construct(
        public readonly int $affectedRows,
        public readonly int $lastInsertId,
        public readonly int $status,
        public readonly bool $moreResults,
    ) {}
}
