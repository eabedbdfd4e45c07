<?php

declare(strict_types=1);

namespace Kiln\Db;

/**
 * The base of every runtime failure of Kiln\Db. A message never carries a password: connection
 * failures name the DSN without it (Dsn::redacted()).
 */
class DbException extends \RuntimeException {}
