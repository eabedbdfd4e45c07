<?php

declare(strict_types=1);

namespace Kiln\Db;

/**
 * A statement ran past its pool's statement timeout (`timeout` in the database URL). Its connection was closed, so
 * the pool never hands it out again. PostgreSQL 14 and later stop the statement too (PgConnector); MySQL and MariaDB
 * finish it on their own.
 */
final class StatementTimeoutException extends DbException {}
