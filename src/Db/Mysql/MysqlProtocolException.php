<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql;

use Kiln\Db\DbException;

/** The server sent something the protocol does not allow (a malformed packet, a wrong sequence id). */
final class MysqlProtocolException extends DbException {}
