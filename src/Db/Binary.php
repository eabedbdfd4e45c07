<?php

declare(strict_types=1);

namespace Kiln\Db;

/**
 * Bytes to bind as a binary parameter (bytea, BLOB): a plain string is bound as text, which PostgreSQL
 * checks as UTF-8 and cuts at a NUL byte.
 */
final class Binary
{
    public function __construct(public readonly string $bytes) {}
}
