<?php

declare(strict_types=1);

namespace Kiln\Db;

/**
 * A statement ran past its pool's statement timeout (`timeout` in the database URL). Its connection was closed, so
 * the pool never hands it out again. The server may still finish the statement (docs/databases.md says when
 * PostgreSQL stops it).
 */
final class StatementTimeoutException extends DbException {}
