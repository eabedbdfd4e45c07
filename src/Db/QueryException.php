<?php

declare(strict_types=1);

namespace Kiln\Db;

/**
 * The server refused a statement: its SQLSTATE (e.g. "23505", a unique violation) and its message.
 * The connection stays usable.
 */
final class QueryException extends DbException
{
    public function __construct(
        string $message,
        public readonly string $sqlState,
        ?\Throwable $previous = null,
    ) {
        parent::__construct("[$sqlState] $message", 0, $previous);
    }
}
