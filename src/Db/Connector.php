<?php

declare(strict_types=1);

namespace Kiln\Db;

use Kiln\Loop\Cancellation;

/**
 * Opens connections for a Pool. connect() suspends the calling Fiber while it connects and authenticates,
 * and throws ConnectionException (its message without the password) when it cannot.
 */
interface Connector
{
    /** @throws ConnectionException|\Kiln\Loop\CancelledException */
    public function connect(?Cancellation $cancellation = null): Connection;

    /** What the pool's messages name this database by (no password). */
    public function describe(): string;
}
