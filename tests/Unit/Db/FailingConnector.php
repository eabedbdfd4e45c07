<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db;

use Kiln\Db\Connection;
use Kiln\Db\ConnectionException;
use Kiln\Db\Connector;
use Kiln\Loop\Cancellation;

use function Kiln\Loop\delay;

/** A database that is down: every connect fails after a short while. */
final class FailingConnector implements Connector
{
    public int $attempts = 0;

    public function connect(?Cancellation $cancellation = null): Connection
    {
        $this->attempts++;
        delay(0.01, $cancellation);
        throw new ConnectionException('Cannot connect to fake://user@db: connection refused');
    }

    public function describe(): string
    {
        return 'fake://user@db';
    }
}
