<?php

declare(strict_types=1);

namespace Kiln\Db;

/**
 * The server refused a statement: its SQLSTATE (e.g. "23505", a unique violation) and its message;
 * getCode() is MySQL's own error number (1062 duplicate entry, 1205 lock wait timeout, 1213 deadlock), 0 on
 * PostgreSQL. The connection stays usable.
 */
final class QueryException extends DbException
{
    public function __construct(
        string $message,
        public readonly string $sqlState,
        ?\Throwable $previous = null,
        int $code = 0,
    ) {
        parent::__construct("[$sqlState] $message", $code, $previous);
    }
}
