<?php

declare(strict_types=1);

namespace Kiln\Db;

/**
 * A connection could not be opened, or was lost (the server went away, the query was cancelled half-way).
 * A statement in flight when it happened is never replayed: it may or may not have run.
 */
final class ConnectionException extends DbException {}
